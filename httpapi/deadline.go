package httpapi

import (
	"net/http"
	"time"
)

// progressWait bounds a stall of a long transfer: an upload's next batch of
// lines and its import, or an export's next rows. The server's ReadTimeout
// (30 s) and WriteTimeout (5 minutes) bound a whole request, and an upload
// of a million codes on a busy or slow host, or an export of millions of
// rows resting beside the tills, takes longer than either: an upload of
// 1,000,000 codes was cut at 31 s while it was still importing ("read the
// upload: i/o timeout"). These transfers move their deadlines on as they
// progress instead, so what is bounded is a stall, not the size.
const progressWait = 2 * time.Minute

// deadlines moves the deadlines of one request's connection.
type deadlines struct {
	rc   *http.ResponseController
	read bool
}

// progressDeadlines returns the deadlines of w's connection: the write
// deadline, and the read deadline too when read is set (an upload).
func progressDeadlines(w http.ResponseWriter, read bool) deadlines {
	return deadlines{rc: http.NewResponseController(w), read: read}
}

// progress moves the deadlines to progressWait from now. A writer that
// cannot move them (a test's recorder) is left as it is.
func (d deadlines) progress() {
	t := time.Now().Add(progressWait)
	if d.read {
		_ = d.rc.SetReadDeadline(t)
	}
	_ = d.rc.SetWriteDeadline(t)
}
