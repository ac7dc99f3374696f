package models

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// slowQuery is the duration past which a statement is logged as slow.
const slowQuery = 200 * time.Millisecond

// gormLogger forwards GORM's logs to slog: slow statements as warnings and
// errors other than "record not found" and translated constraint violations,
// which services handle as expected outcomes.
type gormLogger struct {
	l *slog.Logger
	// translate maps driver errors to GORM's, as TranslateError does for
	// results: a statement run through Raw reaches Trace untranslated, and a
	// unique violation there is an expected outcome (a replayed request id).
	translate func(error) error
}

func newGormLogger(l *slog.Logger, dial gorm.Dialector) logger.Interface {
	if l == nil {
		return logger.Discard
	}
	g := gormLogger{l: l, translate: func(err error) error { return err }}
	if t, ok := dial.(gorm.ErrorTranslator); ok {
		g.translate = t.Translate
	}
	return g
}

func (g gormLogger) LogMode(logger.LogLevel) logger.Interface { return g }

func (g gormLogger) Info(ctx context.Context, msg string, args ...any) {
	g.l.InfoContext(ctx, msg, "args", args)
}

func (g gormLogger) Warn(ctx context.Context, msg string, args ...any) {
	g.l.WarnContext(ctx, msg, "args", args)
}

func (g gormLogger) Error(ctx context.Context, msg string, args ...any) {
	g.l.ErrorContext(ctx, msg, "args", args)
}

func (g gormLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	elapsed := time.Since(begin)
	if err != nil {
		err = g.translate(err)
	}
	// fc renders the statement with its arguments, which costs more than the
	// statement's own round trip: only render what will be written.
	switch {
	case err != nil && !g.l.Enabled(ctx, slog.LevelError):
	case err == nil && !g.l.Enabled(ctx, slog.LevelWarn):
	case err != nil && !errors.Is(err, gorm.ErrRecordNotFound) && !errors.Is(err, gorm.ErrDuplicatedKey) &&
		!errors.Is(err, context.Canceled):
		sql, rows := fc()
		g.l.ErrorContext(ctx, "sql error", "err", err, "elapsed", elapsed, "rows", rows, "sql", sql)
	case elapsed > slowQuery:
		sql, rows := fc()
		g.l.WarnContext(ctx, "slow sql", "elapsed", elapsed, "rows", rows, "sql", sql)
	}
}
