package jdbcbridge

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// fakeBridge answers the handshake, PING and CLOSE like the bridge and, to an EXECUTE, waits
// for its CANCEL and then sends the answer by dribble (nil: never answers it).
type fakeBridge struct {
	ln      net.Listener
	dribble func(w io.Writer, answer []byte)
}

func startFakeBridge(t *testing.T, dribble func(io.Writer, []byte)) *fakeBridge {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeBridge{ln: ln, dribble: dribble}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func fakeFrame(req uint32, body ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, req)
	b = append(b, statusOK)
	for _, x := range body {
		b = append(b, x...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func fakeStr(s string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...)
}

func (f *fakeBridge) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var pending uint32
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		req, op := binary.BigEndian.Uint32(body), body[4]
		switch op {
		case opHello:
			c.Write(fakeFrame(req, []byte{0, protocolVersion}, fakeStr("fake"), binary.BigEndian.AppendUint32(nil, 1<<20)))
		case opOpen:
			c.Write(fakeFrame(req, fakeStr("Fake"), fakeStr("1")))
		case opExecute:
			pending = req
		case opCancel:
			if f.dribble == nil {
				continue
			}
			// An update count of 1, no generated keys, after a stale frame the driver skips.
			answer := append(fakeFrame(pending^0x40000000, fakeStr("padding the answer out")),
				fakeFrame(pending, []byte{resultUpdate}, binary.BigEndian.AppendUint64(nil, 1), []byte{0})...)
			f.dribble(c, answer)
		case opPing:
			c.Write(fakeFrame(req))
		case opClose:
			return
		}
	}
}

// TestCancelGraceCountsSilence: after a cancel, a server still sending its answer (slowly, as
// a loaded machine does) is not cut off when the grace period has passed since the cancel;
// the connection stays usable. Only a server silent for the whole grace period loses it.
// Before, the socket was closed cancelGrace after the cancel whatever arrived: the next
// statement failed with "driver: bad connection".
func TestCancelGraceCountsSilence(t *testing.T) {
	const grace = 3 * time.Second
	slow := startFakeBridge(t, func(w io.Writer, answer []byte) {
		for i := range answer { // about 2 grace periods in all, never silent for one
			time.Sleep(2 * grace / time.Duration(len(answer)))
			w.Write(answer[i : i+1])
		}
	})
	c := connectFake(t, slow.ln.Addr().String(), grace)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err := c.ExecContext(ctx, "UPDATE t SET v = 1", nil)
	t.Logf("cancelled exec returned after %v: %v", time.Since(start), err)
	if !c.IsValid() {
		t.Fatal("the connection was discarded while the server was still answering")
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping after the answer: %v", err)
	}

	silent := startFakeBridge(t, nil)
	c = connectFake(t, silent.ln.Addr().String(), 200*time.Millisecond)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = runBounded(t, func() error { _, err := c.ExecContext(ctx, "UPDATE t SET v = 1", nil); return err })
	if err != context.Canceled || c.IsValid() {
		t.Fatalf("silent server: got %v, valid %v; want context.Canceled and a discarded connection", err, c.IsValid())
	}
}

func connectFake(t *testing.T, addr string, grace time.Duration) *conn {
	t.Helper()
	dc, err := NewConnector(Config{Addr: addr, URL: "jdbc:h2:mem:x", CancelGrace: grace}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	return dc.(*conn)
}
