// Package javatext renders Connect data as Java's String.valueOf renders the
// objects a Kafka Connect worker holds for it — what Kafka's FileStreamSink
// writes, one record value per line:
//
//   - a struct as Struct.toString: Struct{name=value,…}, its fields in
//     schema order, fields holding null left out;
//   - a map as HashMap.toString, {key=value, …} in HashMap's iteration
//     order (package javahash), as JsonConverter builds every map;
//   - an array as ArrayList.toString, [a, b];
//   - integers in decimal, floats and doubles as Java 17's Float.toString
//     and Double.toString (connect.JavaFloat, connect.JavaDouble);
//   - the Decimal logical type as BigDecimal.toString, Date, Time and
//     Timestamp as java.util.Date.toString in UTC (Thu Jan 01 00:00:00 UTC
//     1970);
//   - booleans as true and false, null as null, strings as they are.
//
// Java prints a byte array as its identity hash ([B@1b6d3586), which no
// one can reproduce or read; see String for what Sluice writes instead.
package javatext

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javahash"
)

// Logical type names, as Kafka Connect's Decimal, Date, Time and Timestamp
// schemas are named.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
	// DecimalScale is the Decimal schema's parameter holding the scale.
	DecimalScale = "scale"
)

// String renders v, described by s (nil for schemaless data), as Java's
// String.valueOf renders the object a Kafka Connect worker holds for it.
//
// Bytes, where Java prints an identity hash, are written as base64 (as
// JsonConverter writes them); a caller writing a whole record may prefer
// the bytes themselves (see Bytes).
func String(s *connect.Schema, v any) string {
	var b strings.Builder
	write(&b, s, v)
	return b.String()
}

// Bytes is how String writes bytes: base64, the form JsonConverter gives
// them, as Java's own text (an identity hash) cannot be reproduced.
func Bytes(p []byte) string { return base64.StdEncoding.EncodeToString(p) }

func write(b *strings.Builder, s *connect.Schema, v any) {
	if v == nil {
		b.WriteString("null")
		return
	}
	if s != nil && s.Name != "" && writeLogical(b, s, v) {
		return
	}
	var t string
	if s != nil {
		t = s.Type
	}
	switch x := v.(type) {
	case string:
		b.WriteString(x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case []byte:
		b.WriteString(Bytes(x))
	case float32:
		b.WriteString(connect.JavaFloat(x))
	case float64:
		if t == connect.SchemaTypeFloat32 {
			b.WriteString(connect.JavaFloat(float32(x)))
		} else {
			b.WriteString(connect.JavaDouble(x))
		}
	case json.Number:
		writeNumber(b, t, x)
	case time.Time:
		b.WriteString(Date(x.UnixMilli()))
	case map[string]any:
		if t == connect.SchemaTypeStruct {
			writeStruct(b, s, x)
		} else {
			writeMap(b, s, reflect.ValueOf(x))
		}
	default:
		if n, ok := connect.IntegerValue(v); ok {
			b.WriteString(strconv.FormatInt(n, 10))
			return
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			writeList(b, s, rv)
		case reflect.Map:
			writeMap(b, s, rv)
		default:
			fmt.Fprint(b, v)
		}
	}
}

// writeNumber writes a number left as JSON text, as the Java type its
// schema names (Long or Double without one, as JsonConverter infers).
func writeNumber(b *strings.Builder, t string, n json.Number) {
	if i, err := n.Int64(); err == nil && t != connect.SchemaTypeFloat32 && t != connect.SchemaTypeFloat64 {
		b.WriteString(strconv.FormatInt(i, 10))
		return
	}
	f, _ := n.Float64()
	if t == connect.SchemaTypeFloat32 {
		b.WriteString(connect.JavaFloat(float32(f)))
		return
	}
	b.WriteString(connect.JavaDouble(f))
}

// writeStruct is Struct.toString: no space after the commas, and fields
// holding null are not printed at all.
func writeStruct(b *strings.Builder, s *connect.Schema, m map[string]any) {
	b.WriteString("Struct{")
	first := true
	for _, f := range s.Fields {
		v := m[f.Name]
		if v == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(f.Name)
		b.WriteByte('=')
		write(b, f.Schema, v)
	}
	b.WriteByte('}')
}

// writeList is AbstractCollection.toString.
func writeList(b *strings.Builder, s *connect.Schema, rv reflect.Value) {
	var es *connect.Schema
	if s != nil {
		es = s.ValueSchema
	}
	b.WriteByte('[')
	for i := range rv.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		write(b, es, rv.Index(i).Interface())
	}
	b.WriteByte(']')
}

// writeMap is AbstractMap.toString over a HashMap.
func writeMap(b *strings.Builder, s *connect.Schema, rv reflect.Value) {
	var ks, vs *connect.Schema
	if s != nil {
		ks, vs = s.KeySchema, s.ValueSchema
	}
	var keys []any
	var value func(k any) any
	if m, ok := rv.Interface().(map[string]any); ok {
		// What JsonConverter makes of every JSON object: no reflection.
		keys = make([]any, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		value = func(k any) any { return m[k.(string)] }
	} else {
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.Interface())
		}
		value = func(k any) any {
			kv := reflect.ValueOf(k)
			if !kv.IsValid() { // a null key, which HashMap allows too
				kv = reflect.Zero(rv.Type().Key())
			}
			return rv.MapIndex(kv).Interface()
		}
	}
	b.WriteByte('{')
	for i, k := range hashMapOrder(ks, keys) {
		if i > 0 {
			b.WriteString(", ")
		}
		write(b, ks, k)
		b.WriteByte('=')
		write(b, vs, value(k))
	}
	b.WriteByte('}')
}

// hashMapOrder orders a map's keys as a HashMap holding them iterates.
// The order they were put in, which decides between keys that share a
// bucket, is gone from a Go map: they are taken in the order of their
// text. Keys without a reproducible Java hash code (a Go value no
// converter makes, such as a Go struct) come last, in the order of their
// text.
func hashMapOrder(ks *connect.Schema, keys []any) []any {
	type key struct {
		v    any
		text string
		hash int32
		ok   bool
	}
	all := make([]key, len(keys))
	for i, k := range keys {
		text, isString := k.(string)
		if !isString {
			text = String(ks, k)
		}
		h, ok := hashCode(ks, k)
		all[i] = key{v: k, text: text, hash: h, ok: ok}
	}
	slices.SortFunc(all, func(a, b key) int { return strings.Compare(a.text, b.text) })
	var hashed, rest []any
	var hashes []int32
	for _, k := range all {
		if k.ok {
			hashed = append(hashed, k.v)
			hashes = append(hashes, k.hash)
		} else {
			rest = append(rest, k.v)
		}
	}
	out := make([]any, 0, len(keys))
	for _, i := range javahash.Order(hashes) {
		out = append(out, hashed[i])
	}
	return append(out, rest...)
}

// writeLogical writes the logical types JsonConverter turns into Java
// objects; it reports false for a value it does not recognise, which is
// then written as its underlying type.
func writeLogical(b *strings.Builder, s *connect.Schema, v any) bool {
	switch s.Name {
	case DecimalName:
		d, ok := Decimal(s, v)
		if ok {
			b.WriteString(d)
		}
		return ok
	case DateName:
		if t, ok := v.(time.Time); ok {
			b.WriteString(Date(t.UnixMilli()))
			return true
		}
		n, ok := connect.IntegerValue(v)
		if ok {
			b.WriteString(Date(n * millisPerDay))
		}
		return ok
	case TimeName, TimestampName:
		if t, ok := v.(time.Time); ok {
			b.WriteString(Date(t.UnixMilli()))
			return true
		}
		n, ok := connect.IntegerValue(v)
		if ok {
			b.WriteString(Date(n))
		}
		return ok
	}
	return false
}

// Decimal is BigDecimal.toString of a Decimal's bytes: the unscaled value
// in big-endian two's complement, the scale a schema parameter. It reports
// false when v is not bytes or s has no scale.
func Decimal(s *connect.Schema, v any) (string, bool) {
	p, ok := v.([]byte)
	scale, err := strconv.ParseInt(s.Parameters[DecimalScale], 10, 32)
	if !ok || err != nil {
		return "", false
	}
	return BigDecimal(twosComplement(p), int32(scale)), true
}

// twosComplement reads big-endian two's-complement bytes, as Java's
// BigInteger(byte[]) does.
func twosComplement(p []byte) *big.Int {
	n := new(big.Int).SetBytes(p)
	if len(p) > 0 && p[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(p))))
	}
	return n
}

// BigDecimal is Java's BigDecimal.toString of unscaled·10^-scale: plain
// when the scale is not negative and the exponent is at least -6, else
// one digit, the rest after a point, and E with a signed exponent.
func BigDecimal(unscaled *big.Int, scale int32) string {
	coeff := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	if scale == 0 {
		return sign + coeff
	}
	adjusted := -int64(scale) + int64(len(coeff)-1)
	if scale > 0 && adjusted >= -6 {
		pad := int(scale) - len(coeff)
		if pad >= 0 {
			return sign + "0." + strings.Repeat("0", pad) + coeff
		}
		return sign + coeff[:-pad] + "." + coeff[-pad:]
	}
	out := sign + coeff[:1]
	if len(coeff) > 1 {
		out += "." + coeff[1:]
	}
	if adjusted != 0 {
		out += "E"
		if adjusted > 0 {
			out += "+"
		}
		out += strconv.FormatInt(adjusted, 10)
	}
	return out
}
