package lockclient

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
)

// tap stands between one adapter process and the servers it reaches: a
// listener per address the adapter is given (its addrs and the values of
// its addr_map), forwarding to that address. It exists so that a pause
// lands where a lock step's two commands break: the adapter is stopped
// right after the bytes of its first command reached a data node, not
// after a timer, which on a loaded machine fires before the adapter wrote
// or after it had already read the reply. A single-command step is then
// frozen after the server answered and before the adapter read it, a
// compare-then-act step between its read and its write.
type tap struct {
	lns []net.Listener
	// data marks the listeners to data nodes (not Sentinel's): only a
	// command to one of them triggers a stop.
	data map[net.Listener]bool
	// armed is the stop the next chunk to a data node runs, once.
	armed atomic.Pointer[tapStop]
	// stopping is held from the moment a chunk with a stop armed goes
	// out until the adapter's process is stopped: no reply reaches the
	// adapter meanwhile, so it cannot read the answer before it is
	// stopped, however slowly the machine runs the stop. The reply then
	// waits in the adapter's socket, as it would for a frozen process.
	stopping sync.RWMutex
	mu       sync.Mutex
	conns    map[net.Conn]bool
	done     bool
}

// newTap listens for every address in addrs and in addrMap's values, and
// returns the addresses and the map the adapter is to be given. Addresses
// in control (Sentinel's) forward without triggering a stop.
func newTap(addrs []string, addrMap map[string]string, control bool) (*tap, []string, map[string]string, error) {
	t := &tap{data: map[net.Listener]bool{}, conns: map[net.Conn]bool{}}
	via := map[string]string{}
	listen := func(target string, data bool) (string, error) {
		if a, ok := via[target]; ok {
			return a, nil
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		t.lns = append(t.lns, ln)
		t.data[ln] = data
		via[target] = ln.Addr().String()
		go t.accept(ln, target)
		return via[target], nil
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		v, err := listen(a, !control)
		if err != nil {
			t.close()
			return nil, nil, nil, err
		}
		out[i] = v
	}
	var outMap map[string]string
	if addrMap != nil {
		outMap = make(map[string]string, len(addrMap))
		for k, a := range addrMap {
			v, err := listen(a, true)
			if err != nil {
				t.close()
				return nil, nil, nil, err
			}
			outMap[k] = v
		}
	}
	return t, out, outMap, nil
}

// tapStop is what an armed chunk runs once it was forwarded: run calls
// stopped once the adapter's process is stopped, or once the replies may
// flow again; no reply reaches the adapter before. Only a chunk that
// holds match (when not empty) runs it.
type tapStop struct {
	match []byte
	run   func(stopped func())
}

// arm makes the next chunk the adapter sends to a data node run stop
// once, after it was forwarded; disarm takes it back.
func (t *tap) arm(stop func(stopped func())) { t.armed.Store(&tapStop{run: stop}) }
func (t *tap) disarm()                       { t.armed.Store(nil) }

// armFor is arm for the next chunk to a data node that holds match.
func (t *tap) armFor(match string, stop func(stopped func())) {
	t.armed.Store(&tapStop{match: []byte(match), run: stop})
}

// take takes the armed stop for chunk, if it is the chunk's.
func (t *tap) take(chunk []byte) *tapStop {
	s := t.armed.Load()
	if s == nil || len(s.match) > 0 && !bytes.Contains(chunk, s.match) || !t.armed.CompareAndSwap(s, nil) {
		return nil
	}
	return s
}

func (t *tap) accept(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go t.serve(c, target, t.data[ln])
	}
}

func (t *tap) serve(client net.Conn, target string, data bool) {
	server, err := net.Dial("tcp", target)
	if err != nil {
		client.Close()
		return
	}
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	t.conns[client], t.conns[server] = true, true
	t.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { t.back(client, server); client.Close() })
	wg.Go(func() { t.forward(server, client, data); server.Close() })
	wg.Wait()
	t.mu.Lock()
	delete(t.conns, client)
	delete(t.conns, server)
	t.mu.Unlock()
}

// forward copies the adapter's bytes to the server. A chunk to a data
// node with a stop armed goes out with the replies held back until the
// stop has stopped the adapter.
func (t *tap) forward(dst, src net.Conn, data bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			var stop *tapStop
			if data {
				stop = t.take(buf[:n])
			}
			if stop != nil {
				t.stopping.Lock()
			}
			_, werr := dst.Write(buf[:n])
			if stop != nil {
				var once sync.Once
				stopped := func() { once.Do(t.stopping.Unlock) }
				if werr == nil {
					stop.run(stopped)
				}
				stopped()
			}
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// back copies the server's replies to the adapter, none while a stop is
// under way (stopping).
func (t *tap) back(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			t.stopping.RLock()
			_, werr := dst.Write(buf[:n])
			t.stopping.RUnlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// close stops listening and ends every forwarded connection.
func (t *tap) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.done = true
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	for _, ln := range t.lns {
		ln.Close()
	}
}
