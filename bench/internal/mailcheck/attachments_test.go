package mailcheck

import (
	"encoding/base64"
	"fmt"
	"net/textproto"
	"strings"
	"testing"
)

// mimeMail is a mail with a PDF and an XLS attached and an image inline.
func mimeMail(pdf string) (textproto.MIMEHeader, []byte) {
	h := textproto.MIMEHeader{"Content-Type": {`multipart/mixed; boundary="b1"`}}
	part := func(name, disp, data string) string {
		return fmt.Sprintf("--b1\r\nContent-Type: application/octet-stream\r\nContent-Disposition: %s; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n",
			disp, name, base64.StdEncoding.EncodeToString([]byte(data)))
	}
	body := "--b1\r\nContent-Type: text/plain\r\n\r\nhello\r\n" + part("r.pdf", "attachment", pdf) +
		part("r.xls", "attachment", "xls") + part("c.png", "inline", "png") + "--b1--\r\n"
	return h, []byte(body)
}

// TestMailsCheck: the check passes when the subscribers' mails carry the
// same files, and fails when one file differs in one of them.
func TestMailsCheck(t *testing.T) {
	t.Parallel()
	same := &Mails{}
	for range 3 {
		same.See(mimeMail("pdf"))
	}
	if _, err := same.Check(3, 2); err != nil {
		t.Fatalf("the same files: %v", err)
	}
	one := &Mails{}
	one.See(mimeMail("pdf"))
	one.See(mimeMail("pdf"))
	one.See(mimeMail("pdf, cut short"))
	if _, err := one.Check(3, 2); err == nil || !strings.Contains(err.Error(), "no 3 of the 3 mails") {
		t.Errorf("one PDF different: %v", err)
	}
}
