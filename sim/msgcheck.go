package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// checkShape walks msgpack data and rejects containers that declare more
// elements than the remaining bytes could hold, and nesting deeper than
// the program format allows. The decoder preallocates by the declared
// length, so a few hostile bytes could otherwise claim gigabytes.
func checkShape(b []byte) error {
	n, err := skipValue(b, 0, 0)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("msgpack: %d trailing bytes", len(b)-n)
	}
	return nil
}

var errShort = errors.New("msgpack: truncated data")

func need(b []byte, i, k int) error {
	if k < 0 || i+k > len(b) || i+k < i {
		return errShort
	}
	return nil
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i, depth int) (int, error) {
	if depth > 4*maxDepth+8 {
		return 0, errors.New("msgpack: nested too deep")
	}
	if err := need(b, i, 1); err != nil {
		return 0, err
	}
	c := b[i]
	i++
	uintN := func(w int) (int, error) {
		if err := need(b, i, w); err != nil {
			return 0, err
		}
		var v uint64
		switch w {
		case 1:
			v = uint64(b[i])
		case 2:
			v = uint64(binary.BigEndian.Uint16(b[i:]))
		case 4:
			v = uint64(binary.BigEndian.Uint32(b[i:]))
		}
		i += w
		if v > uint64(len(b)) {
			return 0, errShort
		}
		return int(v), nil
	}
	raw := func(k int) (int, error) { return i + k, need(b, i, k) }
	items := func(k int) (int, error) {
		if k > len(b)-i { // each element takes at least one byte
			return 0, errShort
		}
		var err error
		for ; k > 0; k-- {
			if i, err = skipValue(b, i, depth+1); err != nil {
				return 0, err
			}
		}
		return i, nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return i, nil
	case c >= 0x80 && c <= 0x8f:
		return items(2 * int(c&0x0f))
	case c >= 0x90 && c <= 0x9f:
		return items(int(c & 0x0f))
	case c >= 0xa0 && c <= 0xbf:
		return raw(int(c & 0x1f))
	}
	var k int
	var err error
	switch c {
	case 0xcc, 0xd0:
		return raw(1)
	case 0xcd, 0xd1:
		return raw(2)
	case 0xca, 0xce, 0xd2:
		return raw(4)
	case 0xcb, 0xcf, 0xd3:
		return raw(8)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1..16 plus type byte
		return raw(1 + 1<<(c-0xd4))
	case 0xc4, 0xd9:
		k, err = uintN(1)
	case 0xc5, 0xda:
		k, err = uintN(2)
	case 0xc6, 0xdb:
		k, err = uintN(4)
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32: length, type, data
		if k, err = uintN(1 << (c - 0xc7)); err == nil {
			k++
		}
	case 0xdc, 0xdd:
		if k, err = uintN(2 << (c - 0xdc)); err == nil {
			return items(k)
		}
	case 0xde, 0xdf:
		if k, err = uintN(2 << (c - 0xde)); err == nil {
			return items(2 * k)
		}
	default:
		return 0, fmt.Errorf("msgpack: invalid byte %#x", c)
	}
	if err != nil {
		return 0, err
	}
	return raw(k)
}
