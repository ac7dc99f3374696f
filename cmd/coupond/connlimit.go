package main

import (
	"log/slog"
	"net"
	"net/http"
	"sync"

	"golang.org/x/net/netutil"
)

// connLimit bounds the connections a server holds open (serve
// --max-connections). Each open connection costs the server a goroutine and
// two 4 kB buffers whether it is busy or idle, and an open-loop flood opens
// one for every request outstanding: 11,000 of them held 250 MB. Over the
// limit, a new connection waits in the kernel's accept queue until one
// closes; and once the limit is reached the server stops keeping
// connections alive, which closes the idle ones at once and the busy ones
// after their answer, until fewer than three quarters of the limit are open
// again. Without that, idle keep-alive connections could hold every slot
// until their idle timeout while new clients waited.
type connLimit struct {
	max int
	log *slog.Logger

	mu       sync.Mutex
	srv      *http.Server
	open     int
	shedding bool
}

// listen wraps ln so that at most l.max connections are open at once; 0
// means no limit.
func (l *connLimit) listen(ln net.Listener) net.Listener {
	if l.max <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, l.max)
}

// connState is the server's http.Server.ConnState hook (with next, the
// metrics' own, called first).
func (l *connLimit) connState(next func(net.Conn, http.ConnState)) func(net.Conn, http.ConnState) {
	return func(c net.Conn, st http.ConnState) {
		next(c, st)
		if l.max <= 0 {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		switch st {
		case http.StateNew:
			l.open++
		case http.StateClosed, http.StateHijacked:
			l.open--
		default:
			return
		}
		switch {
		case !l.shedding && l.open >= l.max:
			l.shedding = true
			l.srv.SetKeepAlivesEnabled(false)
			l.log.Warn("connection limit reached: closing idle connections and keeping none alive", "open", l.open, "max", l.max)
		case l.shedding && l.open <= l.max*3/4:
			l.shedding = false
			l.srv.SetKeepAlivesEnabled(true)
			l.log.Info("connections below three quarters of the limit: keeping them alive again", "open", l.open, "max", l.max)
		}
	}
}
