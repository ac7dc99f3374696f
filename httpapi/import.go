package httpapi

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"coupond/authn"
	"coupond/errcode"
	"coupond/services"
)

// MaxImportLines caps the lines of one uploaded file.
const MaxImportLines = 1_000_000

// maxImportBody bounds an upload's body: a million lines of a 32-symbol code
// and a 64-character customer reference, with room to spare.
const maxImportBody = 128 << 20

// maxRequestIDLen leaves room in the request id's 64 characters for the
// ":<batch>" each batch is recorded under.
const maxRequestIDLen = 48

// NewImportHandler serves the console's upload of imported codes:
//
//	POST /import/coupons.csv?campaignId=ID&requestId=RID[&batch=N&line=L]
//
// The body is CSV, one code a line with an optional customer reference in a
// second column (a first line "code,..." is a header), up to 1,000,000 lines.
// It is read as it arrives and imported in batches of 10,000 lines, each one
// services.Campaigns.ImportBatch call recorded under the request id
// "RID:<batch>". The answer is streamed as it goes, one JSON object a line
// (application/x-ndjson): one per batch with its rejected lines and the
// totals so far, including offset, the bytes of the body consumed, and a last
// one with done: true. An error before the first batch is imported is an
// ordinary error answer; after it, a line {"error": {"code", "message"}}
// ends the stream.
//
// Resuming: the same file under the same request id imports nothing twice
// (batches already recorded are replayed). A client that knows where it
// stopped sends only the rest of the file, from the offset of the last batch
// it saw, with batch and line saying the number of the next batch and of the
// first line sent, so the batches keep their ids.
func NewImportHandler(svc *services.Services, log *slog.Logger) http.Handler {
	im := &importer{svc: svc, log: log, batch: services.MaxImportPerCall}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /import/coupons.csv", im.coupons)
	return authn.Middleware(svc.Tokens, log, mux)
}

type importer struct {
	svc   *services.Services
	log   *slog.Logger
	batch int
}

// importProgress is one line of the streamed answer.
type importProgress struct {
	Batch         int64                      `json:"batch,omitempty"`
	FirstLine     int64                      `json:"firstLine,omitempty"`
	LastLine      int64                      `json:"lastLine,omitempty"`
	Offset        int64                      `json:"offset"`
	Lines         int64                      `json:"lines"`
	Imported      int64                      `json:"imported"`
	Rejected      int64                      `json:"rejected"`
	RejectedLines []services.ImportRejection `json:"rejectedLines,omitempty"`
	Done          bool                       `json:"done,omitempty"`
	Error         *importError               `json:"error,omitempty"`
}

type importError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (im *importer) coupons(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	actor := services.ActorFrom(ctx)
	q := r.URL.Query()
	fail := func(err error) {
		code, msg, ok := services.CodeOf(err)
		if !ok {
			im.log.ErrorContext(ctx, "import failed", "err", err)
			code, msg = errcode.Internal, errcode.InternalMessage
		}
		errcode.Write(w, code, msg, services.RetryAfterOf(err))
	}
	if actor.MerchantID == 0 {
		errcode.Write(w, errcode.Unauthenticated, "a valid bearer token is required", 0)
		return
	}
	campaignID, err := strconv.ParseInt(q.Get("campaignId"), 10, 64)
	if err != nil || campaignID <= 0 {
		errcode.Write(w, errcode.BadUserInput, "campaignId is required", 0)
		return
	}
	requestID := q.Get("requestId")
	if requestID == "" || len(requestID) > maxRequestIDLen {
		errcode.Write(w, errcode.BadUserInput, fmt.Sprintf("requestId is required, 1 to %d characters, to resume the upload", maxRequestIDLen), 0)
		return
	}
	batchNo, line := int64(1), int64(1)
	for name, v := range map[string]*int64{"batch": &batchNo, "line": &line} {
		if s := q.Get(name); s != "" {
			if *v, err = strconv.ParseInt(s, 10, 64); err != nil || *v < 1 {
				errcode.Write(w, errcode.BadUserInput, name+" must be a positive number", 0)
				return
			}
		}
	}
	firstLine := line
	body := http.MaxBytesReader(w, r.Body, maxImportBody)
	cr := csv.NewReader(body)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	// The answer is written while the body is still arriving.
	_ = http.NewResponseController(w).EnableFullDuplex()
	dl := progressDeadlines(w, true)

	var total importProgress
	started := false
	var enc *json.Encoder
	flush := func() { _ = http.NewResponseController(w).Flush() }
	lines := make([]services.ImportLine, 0, im.batch)
	eof := false
	for !eof {
		dl.progress()
		lines = lines[:0]
		var last int64
		for len(lines) < im.batch {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				eof = true
				break
			}
			pos, _ := cr.FieldPos(0)
			n := firstLine - 1 + int64(pos)
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					// A malformed line (a stray quote) is reported, not fatal.
					lines = append(lines, services.ImportLine{Line: firstLine - 1 + int64(pe.StartLine), Code: "", CustomerRef: ""})
					continue
				}
				im.streamError(w, enc, started, fmt.Errorf("read the upload: %w", err), fail)
				return
			}
			if n == 1 && len(rec) > 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "code") {
				continue // header
			}
			if n-firstLine+1 > MaxImportLines {
				im.streamError(w, enc, started, &services.Error{Code: errcode.BadUserInput, Kind: services.ErrInvalidInput,
					Message: fmt.Sprintf("a file holds at most %d lines; the lines before line %d were imported", MaxImportLines, n)}, fail)
				return
			}
			l := services.ImportLine{Line: n, Code: rec[0]}
			if len(rec) > 1 {
				l.CustomerRef = strings.TrimSpace(rec[1])
			}
			lines = append(lines, l)
			last = n
		}
		if len(lines) == 0 {
			break
		}
		res, err := im.svc.Campaigns.ImportBatch(ctx, actor, campaignID, fmt.Sprintf("%s:%d", requestID, batchNo), lines)
		if err != nil {
			im.streamError(w, enc, started, err, fail)
			return
		}
		if !started {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			enc = json.NewEncoder(w)
			started = true
		}
		total.Lines += int64(len(lines))
		total.Imported += res.Imported
		total.Rejected += int64(len(res.Rejected))
		total.Offset = cr.InputOffset()
		p := total
		p.Batch, p.FirstLine, p.LastLine, p.RejectedLines = batchNo, lines[0].Line, max(last, lines[len(lines)-1].Line), res.Rejected
		if err := enc.Encode(p); err != nil {
			return // the client left; what was imported stays, and a resume replays it
		}
		flush()
		batchNo++
	}
	if !started {
		errcode.Write(w, errcode.BadUserInput, "the file holds no codes", 0)
		return
	}
	total.Done = true
	_ = enc.Encode(total)
}

// streamError answers err: as an ordinary error answer before anything was
// streamed, as the stream's last line after.
func (im *importer) streamError(w http.ResponseWriter, enc *json.Encoder, started bool, err error, fail func(error)) {
	if !started {
		fail(err)
		return
	}
	code, msg, ok := services.CodeOf(err)
	if !ok {
		im.log.Error("import failed", "err", err)
		code, msg = errcode.Internal, errcode.InternalMessage
	}
	_ = enc.Encode(importProgress{Error: &importError{Code: code, Message: msg}})
}
