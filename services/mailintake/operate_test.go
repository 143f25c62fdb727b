package mailintake_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/stretchr/testify/require"
)

// bigPDF is a PDF of exactly size bytes (a comment pads it; readers ignore
// it).
func bigPDF(name string, size int) []byte {
	head := pdfBytes(name)
	return append(head, bytes.Repeat([]byte{'x'}, size-len(head))...)
}

// fileSizes are the client's documents: message id → file size.
func (e env) fileSizes(t *testing.T) map[string]int64 {
	return storetest.QueryMap[string, int64](t, e.pool, `SELECT message_id, file_size FROM documents WHERE client_id = 'acme'`)
}

// A 40 MB mail whose 30 MiB PDF is over the upload limit (25 MiB, the
// default of INTAKE_MAX_UPLOAD_BYTES): the PDF is refused as an upload
// would be, the small PDF after it becomes a document, the mail goes to
// the error folder naming the limit; the mail streams through the
// intake, which allocates far less than it. A 40 MB mail with two 14 MiB
// PDFs is processed.
func TestFortyMegabyteMails(t *testing.T) {
	// Not parallel: TotalAlloc counts the whole process, and parallel tests
	// start only after every sequential one has finished.
	e := setup(t)
	small := pdfBytes("small")
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "huge@buyer.example", "Huge",
		part{"application/pdf", "huge.pdf", bigPDF("huge", 30<<20)}, part{"application/pdf", "small.pdf", small}))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	passErr, _ := e.pass(t, mailintake.Hooks{})
	runtime.ReadMemStats(&after)
	require.NoError(t, passErr)
	require.Equal(t, map[string]int64{"huge@buyer.example#2": int64(len(small))}, e.fileSizes(t))
	require.Equal(t, 1, e.dc.count(t, "Not processed"))
	reasons := storetest.QueryMap[string, string](t, e.pool, `SELECT message_id, outcome || ': ' || reason FROM mailbox_mails`)
	require.Equal(t, "failed: refused: huge.pdf: payload_too_large: the PDF has 31457280 bytes, more than the 26214400 accepted (INTAKE_MAX_UPLOAD_BYTES)",
		reasons["huge@buyer.example"])
	// The mail is never held whole (it alone is 40 MB), the refused PDF
	// only up to the limit.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the pass over a 40 MB mail allocated %d bytes", alloc)
	require.Less(t, alloc, uint64(40<<20), "the pass over a 40 MB mail allocated %d bytes", alloc)

	a, b := bigPDF("a", 14<<20), bigPDF("b", 14<<20)
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "big@buyer.example", "Big", part{"application/pdf", "a.pdf", a},
		part{"application/pdf", "b.pdf", b}))
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	sizes := e.fileSizes(t)
	require.Equal(t, int64(14<<20), sizes["big@buyer.example#1"])
	require.Equal(t, int64(14<<20), sizes["big@buyer.example#2"])
	sums := storetest.QueryMap[string, []byte](t, e.pool, `SELECT message_id, file_sha256 FROM documents WHERE message_id LIKE 'big@%'`)
	sa, sb := sha256.Sum256(a), sha256.Sum256(b)
	require.Equal(t, map[string][]byte{"big@buyer.example#1": sa[:], "big@buyer.example#2": sb[:]}, sums)
	require.Equal(t, 1, e.dc.count(t, "Processed"))
}

// Malformed mails (a multipart without a boundary, a PDF whose base64
// breaks off) between good ones: each is reported and moved to the error
// folder at its first read (it would fail the same way every time, so no
// retries are spent on it), and the mails around it become documents.
func TestMalformedMailsAmongOthers(t *testing.T) {
	e := setup(t)
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "ok-1@buyer.example", "PO 1", part{"application/pdf", "a.pdf", pdfBytes("a")}))
	e.dc.appendMail(t, "INBOX", []byte("From: jane@buyer.example\r\nMessage-ID: <bad-1@buyer.example>\r\nSubject: bad\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed\r\n\r\n--X\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n--X--\r\n"))
	e.dc.appendMail(t, "INBOX", []byte("From: jane@buyer.example\r\nMessage-ID: <bad-2@buyer.example>\r\nSubject: bad\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0x!!!\r\n"))
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "ok-2@buyer.example", "PO 2", part{"application/pdf", "b.pdf", pdfBytes("b")}))
	e.tune = mailintake.Tuning{Read: mailbox.Tuning{MaxFailures: 3}}
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, map[string]string{
		"ok-1@buyer.example#1": "a.pdf | PO 1 | CONTOSO",
		"ok-2@buyer.example#1": "b.pdf | PO 2 | CONTOSO",
	}, e.documents(t))
	require.Equal(t, 0, e.dc.count(t, "INBOX"))
	require.Equal(t, 2, e.dc.count(t, "Processed"))
	require.Equal(t, 2, e.dc.count(t, "Not processed"))
	rows := storetest.QueryMap[string, string](t, e.pool,
		`SELECT message_id, outcome || ' after ' || failures || ' failures: ' || reason FROM mailbox_mails WHERE message_id LIKE 'bad-%'`)
	require.Equal(t, "failed after 0 failures: malformed MIME: multipart without boundary", rows["bad-1@buyer.example"])
	require.Contains(t, rows["bad-2@buyer.example"], "failed after 0 failures: malformed MIME: application/pdf part: ")
}

// The server renumbers the folder (a new UIDVALIDITY: here the folder is
// recreated, as a restore or a migration does) after one mail was
// processed and another's documents were committed but the mail not yet
// moved. The next pass reads the renumbered folder from the start: no
// document twice, none lost, every mail moved.
func TestFolderRenumbered(t *testing.T) {
	e := setup(t)
	e.mb.Folder = "Orders"
	c := e.dc.client(t)
	require.NoError(t, c.Create("Orders", nil).Wait())
	e.dc.appendMail(t, "Orders", mailBytes("jane@buyer.example", "a@buyer.example", "A", part{"application/pdf", "a.pdf", pdfBytes("a")}))
	e.dc.appendMail(t, "Orders", mailBytes("jane@buyer.example", "b@buyer.example", "B", part{"application/pdf", "b.pdf", pdfBytes("b")},
		part{"application/pdf", "b2.pdf", pdfBytes("b2")}))
	crash := fmt.Errorf("killed before the move")
	passErr, _ := e.pass(t, mailintake.Hooks{BeforeMove: func(_ string, uid uint32) error {
		if uid == 2 {
			return crash
		}
		return nil
	}})
	require.ErrorIs(t, passErr, crash)
	require.Len(t, e.documents(t), 3)
	old := uidValidity(t, c, "Orders")

	// Recreate the folder with the unmoved mail and a new one.
	require.NoError(t, c.Rename("Orders", "Orders-old", nil).Wait())
	require.NoError(t, c.Create("Orders", nil).Wait())
	_, err := c.Select("Orders-old", nil).Wait()
	require.NoError(t, err)
	_, err = c.Move(imap.SeqSetNum(1), "Orders").Wait()
	require.NoError(t, err)
	require.NoError(t, c.Unselect().Wait())
	require.NoError(t, c.Delete("Orders-old").Wait())
	e.dc.appendMail(t, "Orders", mailBytes("jane@buyer.example", "c@buyer.example", "C", part{"application/pdf", "c.pdf", pdfBytes("c")}))
	require.NotEqual(t, old, uidValidity(t, c, "Orders"), "the recreated folder has a new UIDVALIDITY")

	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, map[string]string{
		"a@buyer.example#1": "a.pdf | A | CONTOSO",
		"b@buyer.example#1": "b.pdf | B | CONTOSO",
		"b@buyer.example#2": "b2.pdf | B | CONTOSO",
		"c@buyer.example#1": "c.pdf | C | CONTOSO",
	}, e.documents(t))
	require.Equal(t, 0, e.dc.count(t, "Orders"))
	require.Equal(t, 3, e.dc.count(t, "Processed"))
	outcomes := storetest.QueryMap[string, int](t, e.pool,
		`SELECT message_id || ' ' || outcome, count(*)::int FROM mailbox_attachments GROUP BY 1`)
	require.Equal(t, map[string]int{"a@buyer.example#1 created": 1, "b@buyer.example#1 created": 1, "b@buyer.example#2 created": 1,
		"b@buyer.example#1 replayed": 1, "b@buyer.example#2 replayed": 1, "c@buyer.example#1 created": 1}, outcomes)
}

func uidValidity(t *testing.T, c *imapclient.Client, folder string) uint32 {
	t.Helper()
	st, err := c.Status(folder, &imap.StatusOptions{UIDValidity: true}).Wait()
	require.NoError(t, err)
	return st.UIDValidity
}

// runFor runs the intake with d's mailboxes until stop says so (checked
// after every pass), then stops it and returns Run's error.
func runFor(t *testing.T, d mailintake.Deps, stop func() bool) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	done := make(chan struct{}, 1)
	d.Hooks.AfterPass = func(string, error) {
		if stop() {
			select {
			case done <- struct{}{}:
			default:
			}
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- mailintake.Run(ctx, d) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the intake did not get there within 2 minutes")
	}
	cancel()
	return <-errc
}
