// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Local stand-ins for x402's `batch-settlement` contracts, written for this project from the ABI that ships inside
/// @x402/evm (dist/…/batch-settlement) and the scheme's published EVM specification: same functions, same EIP-712
/// types and domain ("x402 Batch Settlement" / "1"), same accounting. Not the reference contracts: they hold no
/// constructor state and no immutables, so `anvil_setCode` can put their runtime code at the canonical addresses.
///
/// Accounting, per the specification:
/// - a channel is identified by the EIP-712 hash of its immutable config; it holds `balance` (deposited minus
///   withdrawn and refunded) and `totalClaimed` (the cumulative amount the receiver has claimed, never above the
///   payer's signed voucher ceiling nor the balance);
/// - claims only move accounting into the receiver's per-token totals; `settle` sweeps claimed-but-unsettled funds to
///   the receiver in one transfer;
/// - the unclaimed rest (`balance - totalClaimed`) goes back to the payer by a cooperative refund (receiver side) or a
///   timed withdrawal (payer side).

struct ChannelConfig {
    address payer;
    address payerAuthorizer;
    address receiver;
    address receiverAuthorizer;
    address token;
    uint40 withdrawDelay;
    bytes32 salt;
}

struct Voucher {
    ChannelConfig channel;
    uint128 maxClaimableAmount;
}

struct VoucherClaim {
    Voucher voucher;
    bytes signature;
    uint128 totalClaimed;
}

interface IToken {
    function transfer(address to, uint256 value) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
}

interface IDepositCollector {
    /// Moves `amount` of `token` from `payer` to the caller (the channel contract), authorized by `data`.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4);
}

interface IReceiveWithAuthorization {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}

/// Signature checks shared by the stand-ins: 65-byte ECDSA for accounts without code, EIP-1271 for contracts.
library Signatures {
    function recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v < 27) v += 27;
        return ecrecover(digest, v, r, s);
    }

    function isValid(address signer, bytes32 digest, bytes memory signature) internal view returns (bool) {
        if (signer == address(0)) return false;
        if (signer.code.length == 0) return recover(digest, signature) == signer;
        try IERC1271(signer).isValidSignature(digest, signature) returns (bytes4 magic) {
            return magic == IERC1271.isValidSignature.selector;
        } catch {
            return false;
        }
    }
}

contract BatchSettlement {
    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 private constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 private constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 private constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    /// The only collector the stand-in accepts: the ERC-3009 deposit collector at its canonical address.
    address private constant ERC3009_DEPOSIT_COLLECTOR = 0x4020806089470a89826cB9fB1f4059150b550004;
    uint40 private constant MIN_WITHDRAW_DELAY = 900;
    uint40 private constant MAX_WITHDRAW_DELAY = 2592000;

    struct Channel {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct Withdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverTotals {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    mapping(bytes32 => Channel) public channels;
    mapping(bytes32 => Withdrawal) public pendingWithdrawals;
    mapping(bytes32 => uint256) public refundNonce;
    mapping(address => mapping(address => ReceiverTotals)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 totalClaimed, uint128 amount);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed payer, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount);
    event Withdrawn(bytes32 indexed channelId, address indexed payer, uint128 amount);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);

    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH, keccak256("x402 Batch Settlement"), keccak256("1"), block.chainid, address(this)
            )
        );
    }

    function _typed(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _typed(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _typed(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _typed(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata c = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH, getChannelId(c.voucher.channel), c.voucher.maxClaimableAmount, c.totalClaimed
                )
            );
        }
        return _typed(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
    {
        require(amount > 0, "BatchSettlement: zero deposit");
        require(collector == ERC3009_DEPOSIT_COLLECTOR, "BatchSettlement: unknown collector");
        require(config.receiverAuthorizer != address(0), "BatchSettlement: no receiver authorizer");
        require(
            config.withdrawDelay >= MIN_WITHDRAW_DELAY && config.withdrawDelay <= MAX_WITHDRAW_DELAY,
            "BatchSettlement: withdraw delay out of range"
        );
        bytes32 id = getChannelId(config);
        uint256 held = IToken(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, id, collectorData);
        require(
            IToken(config.token).balanceOf(address(this)) == held + amount, "BatchSettlement: deposit not received"
        );
        Channel storage ch = channels[id];
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelCreated(id, config);
        ch.balance += amount;
        emit Deposited(id, msg.sender, amount);
    }

    function claim(VoucherClaim[] calldata voucherClaims) external {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata ch = voucherClaims[i].voucher.channel;
            require(
                msg.sender == ch.receiver || msg.sender == ch.receiverAuthorizer, "BatchSettlement: not the receiver"
            );
            _claim(voucherClaims[i]);
        }
    }

    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature) external {
        require(voucherClaims.length > 0, "BatchSettlement: no claims");
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            require(
                voucherClaims[i].voucher.channel.receiverAuthorizer == authorizer,
                "BatchSettlement: mixed receiver authorizers"
            );
        }
        require(
            Signatures.isValid(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature),
            "BatchSettlement: invalid authorizer signature"
        );
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    /// Raises the channel's claimed total to the row's `totalClaimed`, within the payer's signed ceiling and the
    /// channel's balance. Totals are cumulative: a row at or below what is already claimed changes nothing.
    function _claim(VoucherClaim calldata c) private {
        ChannelConfig calldata config = c.voucher.channel;
        bytes32 id = getChannelId(config);
        bytes32 digest = getVoucherDigest(id, c.voucher.maxClaimableAmount);
        bool signed = config.payerAuthorizer != address(0)
            ? Signatures.recover(digest, c.signature) == config.payerAuthorizer
            : Signatures.isValid(config.payer, digest, c.signature);
        require(signed, "BatchSettlement: invalid voucher signature");
        require(c.totalClaimed <= c.voucher.maxClaimableAmount, "BatchSettlement: claim exceeds voucher");
        Channel storage ch = channels[id];
        require(c.totalClaimed <= ch.balance, "BatchSettlement: claim exceeds balance");
        if (c.totalClaimed <= ch.totalClaimed) return;
        uint128 delta = c.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = c.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(id, config.receiver, c.totalClaimed, delta);
    }

    /// Transfers everything claimed and not yet settled for `receiver` in `token`. Permissionless.
    function settle(address receiver, address token) external {
        ReceiverTotals storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        if (amount == 0) return;
        r.totalSettled = r.totalClaimed;
        require(IToken(token).transfer(receiver, amount), "BatchSettlement: transfer failed");
        emit Settled(receiver, token, msg.sender, amount);
    }

    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external {
        require(msg.sender == config.payer || msg.sender == config.payerAuthorizer, "BatchSettlement: not the payer");
        bytes32 id = getChannelId(config);
        Channel storage ch = channels[id];
        require(amount > 0 && amount <= ch.balance - ch.totalClaimed, "BatchSettlement: amount exceeds escrow");
        pendingWithdrawals[id] = Withdrawal(amount, uint40(block.timestamp));
        emit WithdrawInitiated(id, amount);
    }

    function finalizeWithdraw(ChannelConfig calldata config) external {
        require(msg.sender == config.payer || msg.sender == config.payerAuthorizer, "BatchSettlement: not the payer");
        bytes32 id = getChannelId(config);
        Withdrawal memory w = pendingWithdrawals[id];
        require(w.initiatedAt != 0, "BatchSettlement: no withdrawal");
        require(block.timestamp >= uint256(w.initiatedAt) + config.withdrawDelay, "BatchSettlement: too early");
        delete pendingWithdrawals[id];
        Channel storage ch = channels[id];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 amount = w.amount < available ? w.amount : available;
        ch.balance -= amount;
        if (amount > 0) require(IToken(config.token).transfer(config.payer, amount), "BatchSettlement: transfer failed");
        emit Withdrawn(id, config.payer, amount);
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(id, config);
    }

    function refund(ChannelConfig calldata config, uint128 amount) external {
        require(
            msg.sender == config.receiver || msg.sender == config.receiverAuthorizer, "BatchSettlement: not the receiver"
        );
        _refund(config, getChannelId(config), amount);
    }

    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external {
        bytes32 id = getChannelId(config);
        require(nonce == refundNonce[id], "BatchSettlement: wrong refund nonce");
        require(
            Signatures.isValid(config.receiverAuthorizer, getRefundDigest(id, nonce, amount), receiverAuthorizerSignature),
            "BatchSettlement: invalid authorizer signature"
        );
        _refund(config, id, amount);
    }

    /// The nonce advances first, even when nothing is left to return; the amount is capped at the unclaimed escrow.
    function _refund(ChannelConfig calldata config, bytes32 id, uint128 amount) private {
        refundNonce[id] += 1;
        Channel storage ch = channels[id];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 paid = amount < available ? amount : available;
        if (paid == 0) return;
        ch.balance -= paid;
        Withdrawal storage w = pendingWithdrawals[id];
        if (w.initiatedAt != 0) {
            if (paid >= w.amount) delete pendingWithdrawals[id];
            else w.amount -= paid;
        }
        require(IToken(config.token).transfer(config.payer, paid), "BatchSettlement: transfer failed");
        emit Refunded(id, config.payer, paid);
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(id, config);
    }

    /// Runs several of this contract's calls in one transaction (claim then refund, as the facilitator sends them).
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 0x20), mload(result))
                }
            }
            results[i] = result;
        }
    }
}

/// The ERC-3009 deposit collector: pulls a deposit with the payer's `receiveWithAuthorization` (payee: this
/// collector, nonce bound to the channel: keccak256(abi.encode(channelId, salt))) and hands it to the channel contract.
contract ERC3009DepositCollector {
    address private constant BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        require(msg.sender == BATCH_SETTLEMENT, "ERC3009DepositCollector: only the channel contract");
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IReceiveWithAuthorization(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        require(IToken(token).transfer(msg.sender, amount), "ERC3009DepositCollector: transfer failed");
    }
}
