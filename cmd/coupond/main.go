// Command coupond is the coupon-redemption service: `coupond serve` runs the
// GraphQL API, the web console and the background jobs; the other subcommands
// manage the database, merchants and tokens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `coupond: coupon redemption for chain stores

Usage:
  coupond serve    [--addr :8080] [--database-url URL] [--demo] ...   run the API, console and jobs
  coupond migrate  [--database-url URL]                               apply database migrations
  coupond merchant create --code C --name N [--timezone TZ]           create a merchant
  coupond token create --merchant C --role ROLE [--store CODE]... [--expires-in 720h]
                                                                      create an API token (prints only the token)
  coupond token list   --merchant C                                   list a merchant's tokens
  coupond token revoke --merchant C --id N                            revoke a token
  coupond jobs list [--merchant C] [--job J] [--limit N]              the installation's job runs, or a merchant's
  coupond audit    [--database-url URL]                               check every invariant; exit 1 on any violation
  coupond debug redeem-sql                                            print the one-shot redemption statement (PostgreSQL) as JSON

Without --database-url (or COUPOND_DATABASE_URL) coupond uses the SQLite file
coupond.db in the working directory; a postgres:// URL selects PostgreSQL.
Run "coupond <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "coupond:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitError carries a process exit code other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

// run dispatches a command line; it is main without the process, for tests.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: errors.New("no command given")}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, stdout, stderr)
	case "merchant":
		if len(rest) > 0 && rest[0] == "create" {
			return runMerchantCreate(ctx, rest[1:], stdout, stderr)
		}
	case "token":
		if len(rest) > 0 {
			switch rest[0] {
			case "create":
				return runTokenCreate(ctx, rest[1:], stdout, stderr)
			case "list":
				return runTokenList(ctx, rest[1:], stdout, stderr)
			case "revoke":
				return runTokenRevoke(ctx, rest[1:], stdout, stderr)
			}
		}
	case "jobs":
		if len(rest) > 0 && rest[0] == "list" {
			return runJobsList(ctx, rest[1:], stdout, stderr)
		}
	case "audit":
		return runAudit(ctx, rest, stdout, stderr)
	case "debug":
		if len(rest) > 0 && rest[0] == "redeem-sql" {
			return runDebugRedeemSQL(rest[1:], stdout, stderr)
		}
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return &exitError{code: 2, err: fmt.Errorf("unknown command %q", cmd)}
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(traceLogHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}
