// Package javahost runs Kafka Connect's Java plugins through a connector
// host, a JVM the agent supervises (docs/plugins.md): it speaks the
// agent↔host protocol over a Unix socket, starts and restarts the JVM, and
// offers the host's tasks and connectors behind Sluice's connector SDK, so
// the agent's runtime drives a Java task as it drives a Go one while Kafka
// I/O, transactions and offsets stay in Go.
package javahost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame types (docs/plugins.md, Frames).
const (
	frameRequest  uint8 = 0
	frameReply    uint8 = 1
	frameError    uint8 = 2
	frameNotice   uint8 = 3
	maxFrameBytes       = 64 << 20
	// frameHeader is what follows the length before the op: type, id, op
	// length.
	frameHeader = 1 + 4 + 2
)

// ErrFrameTooLarge says a frame's length is over the protocol's 64 MiB.
var ErrFrameTooLarge = errors.New("frame larger than 64 MiB")

// frame is one message of the protocol.
type frame struct {
	typ  uint8
	id   uint32
	op   string
	body []byte
}

// readFrame reads one frame. A stream that ends between frames gives
// io.EOF; one that ends inside a frame gives io.ErrUnexpectedEOF.
func readFrame(r io.Reader) (frame, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if n > maxFrameBytes {
		return frame{}, fmt.Errorf("read frame of %d bytes: %w", n, ErrFrameTooLarge)
	}
	if n < frameHeader {
		return frame{}, fmt.Errorf("read frame: length %d is shorter than a frame header", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, fmt.Errorf("read frame: %w", err)
	}
	f := frame{typ: buf[0], id: binary.BigEndian.Uint32(buf[1:5])}
	opLen := int(binary.BigEndian.Uint16(buf[5:7]))
	if frameHeader+opLen > len(buf) {
		return frame{}, fmt.Errorf("read frame: op length %d overruns the frame's %d bytes", opLen, n)
	}
	if f.typ > frameNotice {
		return frame{}, fmt.Errorf("read frame: unknown type %d", f.typ)
	}
	f.op = string(buf[frameHeader : frameHeader+opLen])
	f.body = buf[frameHeader+opLen:]
	return f, nil
}

// appendFrame encodes f after dst, so that a writer sends a frame in one
// Write.
func appendFrame(dst []byte, f frame) ([]byte, error) {
	if len(f.op) > 0xFFFF {
		return dst, fmt.Errorf("write frame: op of %d bytes", len(f.op))
	}
	n := frameHeader + len(f.op) + len(f.body)
	if n > maxFrameBytes {
		return dst, fmt.Errorf("write frame %q of %d bytes: %w", f.op, n, ErrFrameTooLarge)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, f.typ)
	dst = binary.BigEndian.AppendUint32(dst, f.id)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.op)))
	dst = append(dst, f.op...)
	return append(dst, f.body...), nil
}
