package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// envName is the environment variable that backs a flag: --hold-timeout is
// COUPOND_HOLD_TIMEOUT.
func envName(flagName string) string {
	return "COUPOND_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// flagSet is a flag.FlagSet whose flags fall back to COUPOND_* environment
// variables; a flag given on the command line wins.
type flagSet struct {
	*flag.FlagSet
}

// lookupEnv is os.LookupEnv; a variable so tests can run without touching the
// process environment.
var lookupEnv = os.LookupEnv

func newFlagSet(name string, stderr io.Writer) flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return flagSet{fs}
}

func (f flagSet) String(name, def, help string) *string {
	if v, ok := lookupEnv(envName(name)); ok {
		def = v
	}
	return f.FlagSet.String(name, def, help+" (env "+envName(name)+")")
}

func (f flagSet) Bool(name string, def bool, help string) *bool {
	if v, ok := lookupEnv(envName(name)); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	return f.FlagSet.Bool(name, def, help+" (env "+envName(name)+")")
}

func (f flagSet) Duration(name string, def time.Duration, help string) *time.Duration {
	if v, ok := lookupEnv(envName(name)); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	return f.FlagSet.Duration(name, def, help+" (env "+envName(name)+")")
}

func (f flagSet) Float64(name string, def float64, help string) *float64 {
	if v, ok := lookupEnv(envName(name)); ok {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			def = n
		}
	}
	return f.FlagSet.Float64(name, def, help+" (env "+envName(name)+")")
}

func (f flagSet) Int(name string, def int, help string) *int {
	if v, ok := lookupEnv(envName(name)); ok {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		}
	}
	return f.FlagSet.Int(name, def, help+" (env "+envName(name)+")")
}

// databaseURL registers the --database-url flag every command has.
func (f flagSet) databaseURL() *string {
	return f.String("database-url", "", "database: a postgres:// URL, or an SQLite file path (default coupond.db)")
}

// parse parses args and refuses stray positional arguments.
func (f flagSet) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	return nil
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// listFlag is a repeatable string flag whose environment variable holds a
// comma-separated list; the flag on the command line, given once or more,
// replaces the environment's list.
type listFlag struct {
	values []string
	set    bool
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.values, ",")
}

func (l *listFlag) Set(v string) error {
	if !l.set {
		l.values, l.set = nil, true
	}
	l.values = append(l.values, v)
	return nil
}

// List registers a repeatable flag backed by a comma-separated environment
// variable.
func (f flagSet) List(name, help string) *[]string {
	l := &listFlag{}
	if v, ok := lookupEnv(envName(name)); ok {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				l.values = append(l.values, s)
			}
		}
	}
	f.Var(l, name, help+" (env "+envName(name)+", comma-separated)")
	return &l.values
}
