// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The one Multicall3 entry point the x402 facilitator uses (`tryAggregate`, for its diagnostics after a failed
/// simulation: balance, name, version, nonce state). Installed at Multicall3's canonical address on the local chain,
/// as it is on every public chain.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(success, "Multicall3: call failed");
            returnData[i] = Result(success, ret);
        }
    }
}
