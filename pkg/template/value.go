package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// Extracted values are dynamically typed, as in invoice2data: a field holds a
// string, an int64, a Float, an order.Date, a []any list or an *Object (a line
// row). nil stands for Python's None (a date that did not parse).

// Float is a parsed number. F is the float invoice2data would compute; Dec is
// the exact decimal as printed (canonical form, "" when unknown), which the
// canonical order uses so that no amount passes through a float.
type Float struct {
	F   float64
	Dec string
}

// Object is an ordered string-keyed map: the output object and line rows.
// Setting an existing key keeps its position, as a Python dict does.
type Object struct {
	keys []string
	m    map[string]any
	// raw is the source text of a lines row's typed values and format the
	// block's value format: the canonical order parses numbers from the
	// text, strictly, so a blank is missing rather than invoice2data's 0.
	raw    map[string]string
	format ValueFormat
	// joined lists the row keys that got a second value from a
	// continuation line (joined, as invoice2data does): several values for
	// a single-valued item field are an error in the canonical order.
	joined map[string]bool
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{m: map[string]any{}} }

// Set sets k to v.
func (o *Object) Set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// Get returns the value of k.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.m[k]
	return v, ok
}

// Has reports whether k is set.
func (o *Object) Has(k string) bool { _, ok := o.m[k]; return ok }

// Delete removes k.
func (o *Object) Delete(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in insertion order.
func (o *Object) Keys() []string { return append([]string(nil), o.keys...) }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// MarshalJSON writes the object with invoice2data's value formatting.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, o, ""); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// truthy is Python's bool(v): empty strings, zero numbers, empty lists and
// None are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case int64:
		return x != 0
	case Float:
		return x.F != 0
	case []any:
		return len(x) > 0
	case *Object:
		return x != nil && x.Len() > 0
	case bool:
		return x
	}
	return true
}

// pyRepr formats a float as Python's repr does (shortest round-trip digits,
// ".0" for integral values, exponent outside [1e-4, 1e16)).
func pyRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		if len(exp) == 2 { // "+5" → "+05"
			exp = exp[:1] + "0" + exp[1:]
		}
		return mant + "e" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// writeJSON writes v in the layout of Python's json.dumps(indent=4,
// ensure_ascii=False) with dates as YYYY-MM-DD.
func writeJSON(b *bytes.Buffer, v any, indent string) error {
	const step = "    "
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		enc, err := marshalString(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case Float:
		b.WriteString(pyRepr(x.F))
	case order.Date:
		b.WriteString(`"` + x.String() + `"`)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(indent + step)
			if err := writeJSON(b, e, indent+step); err != nil {
				return err
			}
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case *Object:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{\n")
		for i, k := range x.keys {
			kk, err := marshalString(k)
			if err != nil {
				return err
			}
			b.WriteString(indent + step)
			b.Write(kk)
			b.WriteString(": ")
			if err := writeJSON(b, x.m[k], indent+step); err != nil {
				return err
			}
			if i < len(x.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	default:
		return fmt.Errorf("template: cannot encode %T as JSON", v)
	}
	return nil
}

func marshalString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// MarshalInvoice2dataJSON renders results as invoice2data's JSON output: a
// list with one object per successfully extracted document (issuer, fields,
// lines, currency, desc; dates as YYYY-MM-DD). Nil results and results that
// lack required fields are left out, as invoice2data leaves them out.
func MarshalInvoice2dataJSON(results []*Result) ([]byte, error) {
	list := make([]any, 0, len(results))
	for _, r := range results {
		if r == nil || !r.OK {
			continue
		}
		list = append(list, r.Fields)
	}
	var b bytes.Buffer
	if err := writeJSON(&b, list, ""); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// compareValues orders two values as Python's < would for the types a
// template produces (numbers, strings, dates). ok is false for mixed types.
func compareValues(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y), true
		case Float:
			return cmpOrdered(float64(x), y.F), true
		}
	case Float:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x.F, float64(y)), true
		case Float:
			return cmpOrdered(x.F, y.F), true
		}
	case string:
		if y, isStr := b.(string); isStr {
			return strings.Compare(x, y), true
		}
	case order.Date:
		if y, isDate := b.(order.Date); isDate {
			return cmpOrdered(x.Year*10000+int(x.Month)*100+x.Day, y.Year*10000+int(y.Month)*100+y.Day), true
		}
	}
	return 0, false
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sumValues adds numbers as Python's sum() would: ints stay ints, a float
// makes the sum a float; exact decimals are summed alongside.
func sumValues(vs []any) (any, error) {
	var isum int64
	fsum := 0.0
	isFloat := false
	dec := new(big.Rat)
	decOK := true
	scale := 0
	for _, v := range vs {
		switch x := v.(type) {
		case int64:
			isum += x
			fsum += float64(x)
			dec.Add(dec, new(big.Rat).SetInt64(x))
		case Float:
			if !isFloat {
				isFloat = true
				fsum = float64(isum)
			}
			fsum += x.F
			r, ok := new(big.Rat).SetString(x.Dec)
			if x.Dec == "" || !ok {
				decOK = false
				continue
			}
			dec.Add(dec, r)
			if _, frac, has := strings.Cut(x.Dec, "."); has && len(frac) > scale {
				scale = len(frac)
			}
		default:
			return nil, fmt.Errorf("cannot sum %T values", v)
		}
	}
	if !isFloat {
		return isum, nil
	}
	// fsum was reset to the int sum when the first float appeared; redo the
	// float sum in input order to match Python's left-to-right addition.
	fsum = 0
	for _, v := range vs {
		switch x := v.(type) {
		case int64:
			fsum += float64(x)
		case Float:
			fsum += x.F
		}
	}
	f := Float{F: fsum}
	if decOK {
		f.Dec = dec.FloatString(scale)
	}
	return f, nil
}
