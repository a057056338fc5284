package javatext

import (
	"encoding/json"
	"math"
	"reflect"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javahash"
)

// hashCode is the Java hashCode of the object a worker holds for v, for
// the keys a HashMap orders: Strings, boxed numbers and booleans, dates,
// and lists and maps of those. It reports false for the rest — a Struct's
// hash code mixes in its schema's identity, a byte array's is its
// identity, and Decimal keys are left out as too rare to matter.
func hashCode(s *connect.Schema, v any) (int32, bool) {
	if v == nil {
		return 0, true
	}
	var t string
	if s != nil {
		t = s.Type
		switch s.Name {
		case DateName, TimeName, TimestampName:
			// java.util.Date.hashCode folds the milliseconds as Long's does.
			if tm, ok := v.(time.Time); ok {
				return javahash.Long(tm.UnixMilli()), true
			}
			n, ok := connect.IntegerValue(v)
			if ok && s.Name == DateName {
				n *= millisPerDay
			}
			return javahash.Long(n), ok
		case DecimalName:
			return 0, false
		}
	}
	switch x := v.(type) {
	case string:
		return javahash.String(x), true
	case bool:
		return javahash.Bool(x), true
	case int8:
		return int32(x), true
	case int16:
		return int32(x), true
	case int32:
		return x, true
	case int64:
		return javahash.Long(x), true
	case int:
		return javahash.Long(int64(x)), true
	case float32:
		return floatHash(x), true
	case float64:
		if t == connect.SchemaTypeFloat32 {
			return floatHash(float32(x)), true
		}
		return doubleHash(x), true
	case json.Number:
		if n, err := x.Int64(); err == nil && t != connect.SchemaTypeFloat32 && t != connect.SchemaTypeFloat64 {
			return hashCode(s, n)
		}
		f, _ := x.Float64()
		return hashCode(s, f)
	case time.Time:
		return javahash.Long(x.UnixMilli()), true
	case []byte:
		return 0, false
	case map[string]any:
		if t == connect.SchemaTypeStruct {
			return 0, false
		}
	}
	if n, ok := connect.IntegerValue(v); ok {
		return int32(n), true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return listHash(s, rv)
	case reflect.Map:
		return mapHash(s, rv)
	}
	return 0, false
}

// listHash is List.hashCode: 31·h + the element's, from 1.
func listHash(s *connect.Schema, rv reflect.Value) (int32, bool) {
	var es *connect.Schema
	if s != nil {
		es = s.ValueSchema
	}
	h := int32(1)
	for i := range rv.Len() {
		eh, ok := hashCode(es, rv.Index(i).Interface())
		if !ok {
			return 0, false
		}
		h = 31*h + eh
	}
	return h, true
}

// mapHash is Map.hashCode: the sum of key hash XOR value hash.
func mapHash(s *connect.Schema, rv reflect.Value) (int32, bool) {
	var ks, vs *connect.Schema
	if s != nil {
		ks, vs = s.KeySchema, s.ValueSchema
	}
	var h int32
	it := rv.MapRange()
	for it.Next() {
		kh, ok := hashCode(ks, it.Key().Interface())
		if !ok {
			return 0, false
		}
		vh, ok := hashCode(vs, it.Value().Interface())
		if !ok {
			return 0, false
		}
		h += kh ^ vh
	}
	return h, true
}

// floatHash is Float.hashCode: the bits, every NaN as the canonical one.
func floatHash(f float32) int32 {
	if f != f {
		return 0x7fc00000
	}
	return int32(math.Float32bits(f))
}

// doubleHash is Double.hashCode: the bits folded, every NaN canonical.
func doubleHash(f float64) int32 {
	if math.IsNaN(f) {
		return javahash.Long(0x7ff8000000000000)
	}
	return javahash.Long(int64(math.Float64bits(f)))
}
