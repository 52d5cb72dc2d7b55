/** Which slice of a list: what the data-access functions take. */
export interface Page {
  limit: number;
  offset: number;
}
