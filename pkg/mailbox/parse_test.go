package mailbox_test

import (
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/stretchr/testify/require"
)

func names(atts []mailbox.Attachment) []string {
	var out []string
	for _, a := range atts {
		out = append(out, a.Filename)
	}
	return out
}

// Names in RFC 2047 and RFC 2231 encodings are decoded; a PDF is known by
// its bytes whatever its name or type says; a quoted-printable body and a
// nested multipart are read.
func TestParseFindsPDFsByContent(t *testing.T) {
	raw := "From: a@buyer.example\r\nSubject: =?utf-8?q?Bestellung_M=C3=BCller?=\r\nMessage-ID: <m1@x>\r\n" +
		"Content-Type: multipart/mixed; boundary=OUT\r\n\r\n" +
		"--OUT\r\nContent-Type: multipart/alternative; boundary=IN\r\n\r\n" +
		"--IN\r\nContent-Type: text/plain\r\n\r\nhello\r\n--IN\r\nContent-Type: text/html\r\n\r\n<p>hello</p>\r\n--IN--\r\n" +
		"--OUT\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=UTF-8''Auftrag%20M%C3%BCller.pdf\r\n" +
		"Content-Transfer-Encoding: quoted-printable\r\n\r\n%PDF-1.7 =C3=BC\r\n" +
		"--OUT\r\nContent-Type: application/pdf; name=\"=?utf-8?b?w7xiZXIucGRm?=\"\r\n\r\nnot a pdf at all\r\n--OUT--\r\n"
	m, err := mailbox.Parse([]byte(raw), mailbox.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, "m1@x", m.MessageID)
	require.Equal(t, "Bestellung Müller", m.Subject)
	require.Equal(t, []string{"Auftrag Müller.pdf"}, names(m.PDFs))
	require.Equal(t, "%PDF-1.7 ü", string(m.PDFs[0].Data))
	require.Equal(t, []string{"über.pdf (application/pdf)"}, m.Skipped)
}

// A mail without Message-ID gets one derived from its bytes: reading it
// again gives the same id.
func TestParseMessageIDWithoutHeader(t *testing.T) {
	raw := []byte("From: a@b.example\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 x\r\n")
	m1, err := mailbox.Parse(raw, mailbox.DefaultLimits)
	require.NoError(t, err)
	m2, err := mailbox.Parse(raw, mailbox.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, m1.MessageID, m2.MessageID)
	require.True(t, strings.HasPrefix(m1.MessageID, "sha256-"), m1.MessageID)
	require.Len(t, m1.PDFs, 1)
}

// A multipart that never ends, and one without boundary, are malformed.
func TestParseMalformed(t *testing.T) {
	for name, raw := range map[string]string{
		"unterminated":  "Content-Type: multipart/mixed; boundary=X\r\n\r\n--X\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4",
		"no boundary":   "Content-Type: multipart/mixed\r\n\r\nbody",
		"broken base64": "Content-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0x!!!\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mailbox.Parse([]byte(raw), mailbox.DefaultLimits)
			require.ErrorIs(t, err, mailbox.ErrMalformed)
		})
	}
}

// A zip is read within its bounds: entries past MaxZipEntries and bytes past
// MaxZipBytes are reported, not read.
func TestParseZipBounds(t *testing.T) {
	pdf := []byte("%PDF-1.4 " + strings.Repeat("x", 100))
	zipped := mailboxtest.Zip(t, map[string][]byte{"1.pdf": pdf, "2.pdf": pdf, "3.pdf": pdf})
	raw := append([]byte("Content-Type: application/zip; name=a.zip\r\n\r\n"), zipped...)
	m, err := mailbox.Parse(raw, mailbox.Limits{MaxDepth: 5, MaxZipEntries: 2, MaxZipBytes: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, []string{"1.pdf", "2.pdf"}, names(m.PDFs))
	require.Equal(t, []string{"a.zip (entries after the first 2)"}, m.Skipped)

	m, err = mailbox.Parse(raw, mailbox.Limits{MaxDepth: 5, MaxZipEntries: 10, MaxZipBytes: 150})
	require.NoError(t, err)
	require.Equal(t, []string{"1.pdf"}, names(m.PDFs))
	require.Equal(t, []string{"a.zip/2.pdf (zip unpacks to more than the limit)"}, m.Skipped)
}

// Attached mails nest only MaxDepth deep.
func TestParseDepthLimit(t *testing.T) {
	raw := "Content-Type: application/pdf\r\n\r\n%PDF-1.4\r\n"
	for range 4 {
		raw = "Content-Type: message/rfc822\r\n\r\n" + raw
	}
	_, err := mailbox.Parse([]byte(raw), mailbox.Limits{MaxDepth: 2, MaxZipEntries: 1, MaxZipBytes: 1})
	require.ErrorIs(t, err, mailbox.ErrMalformed)
	m, err := mailbox.Parse([]byte(raw), mailbox.DefaultLimits)
	require.NoError(t, err)
	require.Len(t, m.PDFs, 1)
}
