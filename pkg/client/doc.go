// Package client is the Go client of the docintake API for ERP integrations:
// upload purchase-order PDFs (Client.Upload, Client.UploadJSON), query their
// state (Client.Document) and receive the results on a webhook
// (WebhookHandler), with the openTRANS ORDER parsed into an Order.
//
// The package is its own module and depends only on the standard library,
// so an integration imports it without the rest of docintake:
//
//	go get github.com/docintake/docintake/pkg/client
//
// Uploads are idempotent on the server: the same message_id with the same
// file returns the original log_id. The client relies on that to retry
// safely: on 429 and 503 it waits as the Retry-After header says, and on
// connection errors it backs off and tries again, without ever creating a
// document twice. API errors come back as *Error carrying the API's stable
// code (CodeTemplateNotFound, CodeValidationFailed, …).
package client
