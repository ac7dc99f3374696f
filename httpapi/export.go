// Package httpapi is coupond's REST transport: the finance exports, CSV and
// XLSX downloads, and the upload of imported codes, authenticated with the
// API's bearer tokens. Like graph, it
// maps requests to service calls and service errors to errcode's table; it
// never touches the database itself.
package httpapi

import (
	"context"
	"encoding/csv"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/xuri/excelize/v2"

	"coupond/authn"
	"coupond/errcode"
	"coupond/models"
	"coupond/services"
)

// NewExportHandler serves the finance exports under /export/, with the same
// bearer tokens and roles as the API:
//
//	/export/statements.csv|xlsx?from=FROM&to=TO[&storeId=ID][&lang=zh]
//	/export/findings.csv|xlsx?[from=FROM][&to=TO][&status=OPEN][&lang=zh]
//	/export/coupons.csv?campaignId=ID[&from=FROM][&to=TO][&lang=zh]
//	/export/redemptions.csv|xlsx?[storeId=ID][&status=SUCCEEDED][&from=FROM][&to=TO][&lang=zh]
//
// FROM and TO are the same everywhere: a date YYYY-MM-DD in the merchant's
// time zone (from the start of from's day to the end of to's day) or an RFC
// 3339 time (from inclusive, to exclusive); statements cover whole days, so
// their times must be local midnights.
//
// Ledger, findings and codes are read in large keyset batches with names
// joined in SQL, never a lookup per row or page; CSV is streamed row by row
// and XLSX written with excelize's stream writer.
func NewExportHandler(svc *services.Services, log *slog.Logger) http.Handler {
	e := &exporter{svc: svc, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /export/statements.csv", e.serve(e.statements, false))
	mux.HandleFunc("GET /export/statements.xlsx", e.serve(e.statements, true))
	mux.HandleFunc("GET /export/findings.csv", e.serve(e.findings, false))
	mux.HandleFunc("GET /export/findings.xlsx", e.serve(e.findings, true))
	mux.HandleFunc("GET /export/coupons.csv", e.serve(e.coupons, false))
	mux.HandleFunc("GET /export/redemptions.csv", e.serve(e.redemptions, false))
	mux.HandleFunc("GET /export/redemptions.xlsx", e.serve(e.redemptions, true))
	return authn.Middleware(svc.Tokens, log, mux)
}

type exporter struct {
	svc *services.Services
	log *slog.Logger
}

// table is an export: a file name, headers in English and Chinese, and a
// function that emits rows.
type table struct {
	name     string
	headerEn []string
	headerZh []string
	rows     func(emit func([]any) error) error
}

type tableFunc func(ctx context.Context, actor services.Actor, r *http.Request, loc *time.Location) (*table, error)

// serve runs an export and writes it as CSV or XLSX. Errors found before the
// first byte is written become JSON errors with the API's codes.
func (e *exporter) serve(build tableFunc, xlsx bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		actor := services.ActorFrom(ctx)
		m, err := e.svc.Merchants.Current(ctx, actor)
		if err != nil {
			e.fail(w, r, err)
			return
		}
		loc, err := time.LoadLocation(m.Timezone)
		if err != nil {
			loc = time.UTC
		}
		t, err := build(ctx, actor, r, loc)
		if err != nil {
			e.fail(w, r, err)
			return
		}
		header := t.headerEn
		if r.URL.Query().Get("lang") == "zh" {
			header = t.headerZh
		}
		if xlsx {
			err = writeXLSX(w, t.name, header, t.rows)
		} else {
			err = writeCSV(w, t.name, header, t.rows)
		}
		if err != nil {
			// Headers are gone; all that is left is to log and cut the stream.
			e.log.ErrorContext(ctx, "export failed", "export", t.name, "err", err)
		}
	}
}

// fail answers an export that failed before its first byte with the API's
// JSON error and the status errcode's table gives its code; RATE_LIMITED also
// says when to retry. Unexpected errors are logged and shown as INTERNAL.
func (e *exporter) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg, ok := services.CodeOf(err)
	if !ok {
		e.log.ErrorContext(r.Context(), "export failed", "path", r.URL.Path, "err", err)
		code, msg = errcode.Internal, errcode.InternalMessage
	}
	errcode.Write(w, code, msg, services.RetryAfterOf(err))
}

func writeCSV(w http.ResponseWriter, name string, header []string, rows func(func([]any) error) error) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
	dl := progressDeadlines(w, false)
	dl.progress()
	// A byte-order mark makes spreadsheet programs read the Chinese as UTF-8.
	if _, err := w.Write([]byte("\xef\xbb\xbf")); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	n := 0
	// One record for every row: the writer copies it out before the next.
	var rec []string
	err := rows(func(row []any) error {
		rec = slices.Grow(rec[:0], len(row))[:len(row)]
		for i, v := range row {
			rec[i] = csvCell(v)
		}
		n++
		if n%500 == 0 {
			cw.Flush()
			dl.progress()
		}
		return cw.Write(rec)
	})
	cw.Flush()
	if err != nil {
		return err
	}
	return cw.Error()
}

// csvCell renders a value, defusing text a spreadsheet would run as a formula.
func csvCell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		if v != "" && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@' || v[0] == '\t' || v[0] == '\r') {
			return "'" + v
		}
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case yuan:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

func writeXLSX(w http.ResponseWriter, name string, header []string, rows func(func([]any) error) error) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Sheet1"
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = h
	}
	if err := sw.SetRow("A1", hdr); err != nil {
		return err
	}
	// The sheet is built whole before it is written: its deadline moves
	// with the rows, and once more for the writing.
	dl := progressDeadlines(w, false)
	dl.progress()
	line := 1
	err = rows(func(row []any) error {
		line++
		if line%500 == 0 {
			dl.progress()
		}
		cells := make([]any, len(row))
		for i, v := range row {
			switch v := v.(type) {
			case yuan:
				cells[i] = float64(v) / 100
			default:
				cells[i] = v
			}
		}
		cell, _ := excelize.CoordinatesToCellName(1, line)
		return sw.SetRow(cell, cells)
	})
	if err != nil {
		return err
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.xlsx"`)
	dl.progress()
	return f.Write(w)
}

// yuan is an amount in fen shown in yuan: 1234 is 12.34.
type yuan int64

func (y yuan) String() string {
	sign := ""
	v := int64(y)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

func localTime(t *time.Time, loc *time.Location) any {
	if t == nil {
		return nil
	}
	return t.In(loc).Format("2006-01-02 15:04:05")
}

func (e *exporter) statements(ctx context.Context, actor services.Actor, r *http.Request, _ *time.Location) (*table, error) {
	q := r.URL.Query()
	in := services.StatementInput{From: q.Get("from"), To: q.Get("to")}
	if s := q.Get("storeId"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, &services.Error{Code: errcode.BadUserInput, Message: "storeId must be an id", Kind: services.ErrInvalidInput}
		}
		in.StoreID = id
	}
	st, err := e.svc.Statements.Daily(ctx, actor, in)
	if err != nil {
		return nil, err
	}
	var storeIDs, ids []int64
	for _, l := range st.Stores {
		storeIDs = append(storeIDs, l.StoreID)
	}
	for _, l := range slices.Concat(st.Campaigns, st.Lapsed) {
		ids = append(ids, l.CampaignID)
	}
	for _, a := range st.Adjustments {
		if a.StoreID != 0 {
			storeIDs = append(storeIDs, a.StoreID)
		}
		ids = append(ids, a.CampaignID)
	}
	// One lookup each for the statement's distinct stores and campaigns: a
	// year of lines names the same few hundred many times over.
	slices.Sort(storeIDs)
	storeIDs = slices.Compact(storeIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	names := map[int64]models.Store{}
	if len(storeIDs) > 0 {
		stores, err := e.svc.Stores.ByIDs(ctx, actor, storeIDs)
		if err != nil {
			return nil, err
		}
		for _, s := range stores {
			names[s.ID] = s
		}
	}
	camps := map[int64]string{}
	if len(ids) > 0 {
		cs, err := e.svc.Campaigns.ByIDs(ctx, actor, ids)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			camps[c.ID] = c.Name
		}
	}
	closed := map[string]bool{}
	for _, d := range st.ClosedDays {
		closed[d] = true
	}
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	return &table{
		name: "statements-" + st.From + "-" + st.To,
		headerEn: []string{"day", "store code", "store", "campaign", "redeemed", "redeemed amount (yuan)",
			"refunded", "refunded amount (yuan)", "net", "net amount (yuan)",
			"closed", "expired", "expired value (yuan)", "voided", "adjusts closed day"},
		headerZh: []string{"日期", "门店编码", "门店", "批次", "核销笔数", "核销金额(元)", "撤销笔数", "撤销金额(元)", "净笔数", "净金额(元)",
			"已关账", "过期张数", "过期面值(元)", "作废张数", "调整所属关账日"},
		// Store totals, then per campaign, then expiries and voids (no store),
		// then adjustments: each in the columns of the figure it corrects, on
		// the day it was booked, naming the closed day it corrects.
		rows: func(emit func([]any) error) error {
			for _, group := range [][]services.StatementLine{st.Stores, st.Campaigns, st.Lapsed} {
				for _, l := range group {
					camp := "(all)"
					if l.CampaignID != 0 {
						camp = camps[l.CampaignID]
					}
					s := names[l.StoreID]
					if err := emit([]any{l.Day, s.Code, s.Name, camp, l.RedeemedCount, yuan(l.RedeemedAmount),
						l.RefundedCount, yuan(l.RefundedAmount), l.NetCount, yuan(l.NetAmount),
						yesNo(l.Closed), l.ExpiredCount, yuan(l.ExpiredValue), l.VoidedCount, ""}); err != nil {
						return err
					}
				}
			}
			for _, a := range st.Adjustments {
				var l services.StatementLine
				switch a.Figure {
				case models.AdjustRedeemed:
					l.RedeemedCount, l.RedeemedAmount = a.Count, a.Amount
				case models.AdjustRefunded:
					l.RefundedCount, l.RefundedAmount = a.Count, a.Amount
				case models.AdjustExpired:
					l.ExpiredCount, l.ExpiredValue = a.Count, a.Amount
				case models.AdjustVoided:
					l.VoidedCount = a.Count
				}
				s := names[a.StoreID]
				if err := emit([]any{a.Day, s.Code, s.Name, camps[a.CampaignID], l.RedeemedCount, yuan(l.RedeemedAmount),
					l.RefundedCount, yuan(l.RefundedAmount), l.RedeemedCount - l.RefundedCount, yuan(l.RedeemedAmount - l.RefundedAmount),
					yesNo(closed[a.Day]), l.ExpiredCount, yuan(l.ExpiredValue), l.VoidedCount, a.ClosedDay}); err != nil {
					return err
				}
			}
			return nil
		},
	}, nil
}

func (e *exporter) findings(ctx context.Context, actor services.Actor, r *http.Request, loc *time.Location) (*table, error) {
	q := r.URL.Query()
	stream, err := e.svc.Reconciliation.FindingExport(ctx, actor, services.FindingExportFilter{
		Status: models.FindingStatus(q.Get("status")), From: q.Get("from"), To: q.Get("to")})
	if err != nil {
		return nil, err
	}
	return &table{
		name:     "findings",
		headerEn: []string{"id", "kind", "status", "redemption", "details", "found at", "resolved by", "note", "resolved at"},
		headerZh: []string{"编号", "类型", "状态", "核销单号", "详情", "发现时间", "处理人", "处理说明", "处理时间"},
		rows: func(emit func([]any) error) error {
			return stream(func(fd models.Finding) error {
				return emit([]any{fd.ID, string(fd.Kind), string(fd.Status), deref(fd.RedeemNo), fd.Details,
					localTime(&fd.CreatedAt, loc), deref(fd.ResolvedBy), deref(fd.Note), localTime(fd.ResolvedAt, loc)})
			})
		},
	}, nil
}

func (e *exporter) coupons(ctx context.Context, actor services.Actor, r *http.Request, loc *time.Location) (*table, error) {
	q := r.URL.Query()
	id, err := strconv.ParseInt(q.Get("campaignId"), 10, 64)
	if err != nil {
		return nil, &services.Error{Code: errcode.BadUserInput, Message: "campaignId is required", Kind: services.ErrInvalidInput}
	}
	camp, stream, err := e.svc.Campaigns.CodeExport(ctx, actor, id, q.Get("from"), q.Get("to"))
	if err != nil {
		return nil, err
	}
	return &table{
		name:     fmt.Sprintf("coupons-campaign-%d", camp.ID),
		headerEn: []string{"code", "formatted", "status", "customer", "issued at", "uses total", "uses left"},
		headerZh: []string{"券码", "券码(分组)", "状态", "客户", "发放时间", "总次数", "剩余次数"},
		rows: func(emit func([]any) error) error {
			return stream(func(c models.Coupon) error {
				return emit([]any{c.Code, services.FormatCouponCode(c.Code), string(c.Status), deref(c.CustomerRef), localTime(&c.CreatedAt, loc),
					c.UsesTotal, c.UsesLeft})
			})
		},
	}, nil
}

func (e *exporter) redemptions(ctx context.Context, actor services.Actor, r *http.Request, loc *time.Location) (*table, error) {
	q := r.URL.Query()
	f := services.RedemptionExportFilter{Status: models.FlowStatus(q.Get("status")), From: q.Get("from"), To: q.Get("to")}
	if s := q.Get("storeId"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, &services.Error{Code: errcode.BadUserInput, Message: "storeId must be an id", Kind: services.ErrInvalidInput}
		}
		f.StoreID = id
	}
	stream, err := e.svc.Coupons.RedemptionExport(ctx, actor, f)
	if err != nil {
		return nil, err
	}
	return &table{
		name: "redemptions",
		headerEn: []string{"redemption", "request id", "operation", "status", "reject reason", "release reason", "store",
			"coupon", "order amount (yuan)", "discount (yuan)", "order", "created at", "finished at", "operator",
			"use_no", "customer_ref"},
		headerZh: []string{"核销单号", "请求号", "方式", "状态", "拒绝原因", "释放原因", "门店", "券码", "订单金额(元)", "优惠金额(元)",
			"订单号", "创建时间", "完成时间", "操作员", "第几次使用", "客户"},
		rows: func(emit func([]any) error) error {
			// emit is done with a row when it returns, so one slice
			// carries them all.
			row := make([]any, 0, 16)
			return stream(func(fl models.FlowExportRow) error {
				return emit(append(row[:0], fl.RedeemNo, fl.RequestID, string(fl.Operation), string(fl.Status), deref(fl.RejectReason),
					deref(fl.ReleaseReason), fl.StoreCode, fl.CouponCode, yuan(fl.OrderAmount),
					yuan(fl.DiscountAmount), deref(fl.OrderRef), localTime(&fl.CreatedAt, loc), localTime(fl.FinishedAt, loc),
					fl.OperatorName, useNo(fl.UseNo), deref(fl.CustomerRef)))
			})
		},
	}, nil
}

// useNo is a ledger row's use of its coupon, empty for a flow that took
// none (REJECTED).
func useNo(n int64) any {
	if n == 0 {
		return ""
	}
	return n
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
