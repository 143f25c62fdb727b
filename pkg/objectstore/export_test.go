package objectstore

// SDKPayloadSHA256 lets the benchmark give the SDK's PutObject the digest
// that PutSHA256 signs, so that both paths do the same work.
var SDKPayloadSHA256 = sdkPayloadSHA256
