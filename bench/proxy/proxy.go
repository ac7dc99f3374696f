// Package proxy is a loopback TCP proxy that can add latency, black-hole
// traffic (connections stay open, bytes stop flowing) and sever every
// connection, to put between coupond and PostgreSQL.
package proxy

import (
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards 127.0.0.1:Port to Target.
type Proxy struct {
	Target string
	ln     net.Listener

	mu        sync.Mutex
	latency   time.Duration
	blackhole bool
	refuse    bool
	conns     map[net.Conn]struct{}
	wake      chan struct{}
}

// Start listens on a free loopback port.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Target: target, ln: ln, conns: map[net.Conn]struct{}{}, wake: make(chan struct{})}
	go p.accept()
	return p, nil
}

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() { p.ln.Close(); p.Sever() }

// SetLatency delays every chunk forwarded in either direction by d.
func (p *Proxy) SetLatency(d time.Duration) { p.mu.Lock(); p.latency = d; p.mu.Unlock() }

// SetBlackhole stops (on) or resumes (off) the flow of bytes on every
// connection, new ones included.
func (p *Proxy) SetBlackhole(on bool) {
	p.mu.Lock()
	p.blackhole = on
	if !on {
		close(p.wake)
		p.wake = make(chan struct{})
	}
	p.mu.Unlock()
}

// SetRefuse makes the proxy close new connections at once (a database that
// is down).
func (p *Proxy) SetRefuse(on bool) { p.mu.Lock(); p.refuse = on; p.mu.Unlock() }

// Sever closes every open connection (a database restart).
func (p *Proxy) Sever() {
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	u, err := net.DialTimeout("tcp", p.Target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.track(c, true)
	p.track(u, true)
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			c.Close()
			u.Close()
			p.track(c, false)
			p.track(u, false)
		})
	}
	go func() { p.pipe(u, c); closeBoth() }()
	p.pipe(c, u)
	closeBoth()
}

// pipe copies src to dst chunk by chunk, honouring latency and black-holing.
func (p *Proxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			for {
				p.mu.Lock()
				bh, wake, lat := p.blackhole, p.wake, p.latency
				p.mu.Unlock()
				if bh {
					<-wake
					continue
				}
				if lat > 0 {
					time.Sleep(lat)
				}
				break
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
