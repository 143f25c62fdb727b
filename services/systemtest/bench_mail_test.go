package systemtest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/emersion/go-imap/v2"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BenchmarkMailIntake measures mails per second through the mailbox intake
// of the standalone system (S3 on versitygw, PostgreSQL, a Dovecot on
// loopback; the processor and dispatcher running too): INTAKE_BENCH_MAILS
// mails (default 200) with one 100 KB PDF each are moved into the watched
// folder at once (one IMAP MOVE from a staging folder), and the clock stops
// when the last is recorded processed (its document committed and the mail
// moved to the processed folder). The baseline, in the same run on the same
// system, is the HTTP upload path with the same PDFs posted one after
// another, as the intake reads one mailbox one mail after another.
//
//	make bench-mailintake   (go test -bench BenchmarkMailIntake -benchtime 1x)
func BenchmarkMailIntake(b *testing.B) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("INTAKE_BENCH_MAILS")); err == nil && v > 0 {
		n = v
	}
	dc := mailboxtest.StartDovecot(b, nil)
	dbURL := storetest.SchemaURL(b)
	s3cfg := objectstoretest.S3Config(b)
	sys := standalonetest.Start(b, map[string]string{
		"INTAKE_DATABASE_URL": dbURL, "INTAKE_S3_ENDPOINT": s3cfg.Endpoint, "INTAKE_S3_BUCKET": s3cfg.Bucket,
		"INTAKE_S3_ACCESS_KEY": s3cfg.AccessKey, "INTAKE_S3_SECRET_KEY": s3cfg.SecretKey, "INTAKE_LOG_LEVEL": "warn",
		"INTAKE_MAILBOXES_FILE": benchMailboxFile(b, dc),
	})
	pool, err := pgxpool.New(b.Context(), dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	pdf := benchPDF()

	b.ResetTimer()
	start := time.Now()
	uploadSequentially(b, sys.URL, pdf, n)
	uploads := float64(n) / time.Since(start).Seconds()
	waitCount(b, pool, `SELECT count(*) FROM documents WHERE state = 'received'`, 0) // the processor has caught up

	stageMails(b, dc, pdf, n)
	mover := dc.Client(b)
	if _, err := mover.Select("Staging", nil).Wait(); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if _, err := mover.Move(imap.SeqSet{{Start: 1, Stop: 0}}, "INBOX").Wait(); err != nil {
		b.Fatal(err)
	}
	waitCount(b, pool, `SELECT count(*) FROM mailbox_mails WHERE outcome = 'processed'`, n)
	mails := float64(n) / time.Since(start).Seconds()
	b.StopTimer()

	b.ReportMetric(mails, "mails/s")
	b.ReportMetric(uploads, "uploads/s")
	b.ReportMetric(mails/uploads, "mail/upload")
	b.ReportMetric(0, "ns/op")
	fmt.Printf("mail intake: %d mails (one 100 KB PDF each): %.1f mails/s; HTTP uploads one at a time, same PDFs, same system: %.1f/s; ratio %.2f×\n",
		n, mails, uploads, mails/uploads)
}

// benchMailboxFile writes the mailbox file of the dev client's mailbox on dc.
func benchMailboxFile(b *testing.B, dc *mailboxtest.Dovecot) string {
	dir := b.TempDir()
	pw := filepath.Join(dir, "imap-password")
	file := filepath.Join(dir, "mailboxes.yaml")
	yaml := fmt.Sprintf(`mailboxes:
  - id: orders-bench
    client: dev
    imap: {host: 127.0.0.1, port: %d, security: none, username: %s, password_file: %s}
    processed_folder: Processed
    error_folder: Not processed
    senders: {"buyer.example": CONTOSO}
`, dc.Port, dc.User, pw)
	if err := os.WriteFile(pw, []byte(dc.Password), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	return file
}

// uploadSequentially posts n copies of pdf under distinct message ids.
func uploadSequentially(b *testing.B, base string, pdf []byte, n int) {
	client := &http.Client{}
	for i := range n {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("message_id", fmt.Sprintf("bench-upload-%d@buyer.example#1", i))
		_ = w.WriteField("subject", "PO")
		_ = w.WriteField("template", "contoso-po")
		fw, _ := w.CreateFormFile("file", "order.pdf")
		_, _ = fw.Write(pdf)
		_ = w.Close()
		req, _ := http.NewRequest(http.MethodPost, base+"/incoming", &buf)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+standalonetest.DevToken)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			b.Fatalf("upload %d: status %d", i, res.StatusCode)
		}
	}
}

// stageMails puts n mails with pdf into the folder Staging.
func stageMails(b *testing.B, dc *mailboxtest.Dovecot, pdf []byte, n int) {
	if err := dc.Client(b).Create("Staging", nil).Wait(); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		raw := mailboxtest.Mail("jane@buyer.example", fmt.Sprintf("bench-mail-%d@buyer.example", i), "PO",
			mailboxtest.Part{ContentType: "application/pdf", Filename: "order.pdf", Body: pdf})
		dc.Append(b, "Staging", raw)
	}
}

// waitCount polls query until it counts want, for up to ten minutes.
func waitCount(b *testing.B, pool *pgxpool.Pool, query string, want int) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var got int
		if err := pool.QueryRow(context.Background(), query).Scan(&got); err != nil {
			b.Fatal(err)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: %d, not %d, after ten minutes", query, got, want)
		}
		time.Sleep(10 * time.Millisecond) // polling the database, as a client of the system would
	}
}
