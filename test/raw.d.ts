/** A file's text, as Vite's `?raw` import gives it (docs checked against the code). */
declare module "*?raw" {
  const text: string;
  export default text;
}
