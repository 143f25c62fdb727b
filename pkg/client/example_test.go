package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/docintake/docintake/pkg/client"
)

// Upload a PDF and follow it until processing has decided its outcome.
func ExampleClient_Upload() {
	ctx := context.Background()
	c, err := client.New(baseURL, token, nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("testdata/order.pdf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ack, err := c.Upload(ctx, client.UploadRequest{File: f, Filename: "order.pdf",
		MessageID: "<CAF=4711@mail.example>#1", Subject: "PO G-4711", Template: "gen-order"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("upload:", ack.Status)

	// Wait for the outcome (a webhook tells you without polling; see
	// NewWebhookHandler).
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	d, err := c.WaitOutcome(wctx, ack.LogID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("outcome:", d.State.Outcome(), "date:", *d.DocumentDate)

	// Sending the same file with the same message_id again (a retry after
	// a lost answer) creates nothing new: the original log_id comes back.
	if _, err := f.Seek(0, 0); err != nil {
		log.Fatal(err)
	}
	again, err := c.Upload(ctx, client.UploadRequest{File: f, Filename: "order.pdf",
		MessageID: "<CAF=4711@mail.example>#1", Subject: "PO G-4711", Template: "gen-order"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same log_id:", again.LogID == ack.LogID)
	// Output:
	// upload: received
	// outcome: success date: 2026-02-03
	// same log_id: true
}

// The JSON variant takes a template name (it has no party_id).
func ExampleClient_UploadJSON() {
	c, err := client.New(baseURL, token, nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("testdata/order.pdf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ack, err := c.UploadJSON(context.Background(), client.UploadRequest{File: f, Filename: "order.pdf",
		MessageID: "example-json-1", Subject: "PO G-4711", Template: "gen-order"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ack.Status, ack.LogID != "")
	// Output: received true
}

// API errors carry the API's stable code.
func ExampleErrorCode() {
	c, err := client.New(baseURL, token, nil)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Document(context.Background(), "00000000-0000-0000-0000-000000000000")
	fmt.Println(client.ErrorCode(err))

	f, err := os.Open("testdata/order.pdf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	_, err = c.Upload(context.Background(), client.UploadRequest{File: f, MessageID: "example-err-1",
		Subject: "PO", Template: "no-such-template"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code)
	}
	// Output:
	// document_not_found
	// 400 template_not_found
}

// Receive the results: the handler checks the bearer token, the signature
// and the timestamp, and hands over the parsed openTRANS order.
func ExampleNewWebhookHandler() {
	got := make(chan client.Delivery, 16)
	h, err := client.NewWebhookHandler(client.WebhookConfig{
		Token:  webhookToken,  // the client's webhook_token
		Secret: signingSecret, // the client's signing_secret ("whsec_…")
		Handle: func(ctx context.Context, d client.Delivery) error {
			// Deduplicate on d.ID, store the order, answer quickly.
			got <- d
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: webhookAddr, Handler: h}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	defer srv.Close()

	// Upload an order; its result arrives on the webhook.
	c, err := client.New(baseURL, token, nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("testdata/order.pdf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ack, err := c.Upload(context.Background(), client.UploadRequest{File: f, MessageID: "example-webhook-1",
		Subject: "PO G-4711", PartyID: "GEN"})
	if err != nil {
		log.Fatal(err)
	}
	for d := range got {
		if d.LogID != ack.LogID { // deliveries of other uploads
			continue
		}
		fmt.Println(d.Status, d.Template, d.MessageID)
		fmt.Println("order", d.Order.ID, d.Order.Date, d.Order.Currency)
		for _, it := range d.Order.Items {
			fmt.Println(it.SupplierPID, it.Description, it.Quantity, it.UnitPrice)
		}
		break
	}
	// Output:
	// success gen-order example-webhook-1
	// order G-4711 2026-02-03 EUR
	// BOLT-1 Bolts M8 10 1.50
	// NUT-2 Nuts M8 20 0.25
}
