package mailboxtest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/textproto"
)

// Part is an attachment of a Mail.
type Part struct {
	ContentType, Filename string
	Body                  []byte
}

// Mail builds a multipart/mixed mail from "Buyer <from>" with a text body
// and parts, each base64-encoded in lines of 76 as mail clients send
// attachments.
func Mail(from, messageID, subject string, parts ...Part) []byte {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	tw, _ := w.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}})
	fmt.Fprint(tw, "Please find our order attached.\r\n")
	for _, p := range parts {
		h := textproto.MIMEHeader{"Content-Type": {p.ContentType}, "Content-Transfer-Encoding": {"base64"},
			"Content-Disposition": {fmt.Sprintf("attachment; filename=%q", p.Filename)}}
		pw, _ := w.CreatePart(h)
		enc := base64.StdEncoding.EncodeToString(p.Body)
		for len(enc) > 76 {
			fmt.Fprint(pw, enc[:76]+"\r\n")
			enc = enc[76:]
		}
		fmt.Fprint(pw, enc+"\r\n")
	}
	_ = w.Close()
	head := fmt.Sprintf("From: Buyer <%s>\r\nTo: orders@acme.example\r\nSubject: %s\r\nMessage-ID: <%s>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n",
		from, subject, messageID, w.Boundary())
	return append([]byte(head), body.Bytes()...)
}
