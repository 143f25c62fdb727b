package template

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/docintake/docintake/pkg/order"
)

// invoice2data reads templates with PyYAML, which resolves plain scalars by
// YAML 1.1 rules; yaml.v3 follows YAML 1.2. These are PyYAML's implicit
// resolvers (resolver.py), so that a template means what it means to
// invoice2data: an unquoted 04080176 stays the string "04080176" (not an
// octal, not a float), yes/no/on/off are booleans, 1e5 is a string and
// 1_000 and 0o-less 010 are the integers 1000 and 8.
var (
	yaml11Bool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yaml11Float = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yaml11Int   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yaml11Null  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	yaml11Date  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	yaml11Time  = regexp.MustCompile(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?$`)
)

// yamlScalar resolves a scalar node as invoice2data's loader does: PyYAML's
// YAML 1.1 rules for YAML files, JSON's for JSON files (json.load). It
// returns the type ("str", "int", "float", "bool", "null", "date",
// "datetime") and the value: string, int64, Float, bool, nil or order.Date
// (a datetime stays its text: no template field takes one).
func yamlScalar(n *yaml.Node, isJSON bool) (string, any) {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return "str", n.Value
	}
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.ShortTag() {
		case "!!str", "!!binary":
			return "str", n.Value
		}
	}
	v := n.Value
	if isJSON {
		switch {
		case v == "true" || v == "false":
			return "bool", v == "true"
		case v == "null":
			return "null", nil
		}
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return "int", i
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			dec, _ := order.CanonicalDecimal(v)
			return "float", Float{F: f, Dec: dec}
		}
		return "str", v
	}
	switch {
	case yaml11Bool.MatchString(v):
		switch v[0] {
		case 'y', 'Y', 't', 'T':
			return "bool", true
		case 'o', 'O':
			return "bool", v[1] == 'n' || v[1] == 'N'
		}
		return "bool", false
	case yaml11Int.MatchString(v):
		if i, ok := yaml11ParseInt(v); ok {
			return "int", i
		}
	case yaml11Float.MatchString(v):
		return "float", yaml11ParseFloat(v)
	case yaml11Null.MatchString(v):
		return "null", nil
	case yaml11Date.MatchString(v):
		if d, err := ParseDate(v, []string{"%Y-%m-%d"}, nil); err == nil {
			return "date", d
		}
	case yaml11Time.MatchString(v):
		return "datetime", v
	}
	return "str", v
}

// yaml11ParseInt is PyYAML's construct_yaml_int.
func yaml11ParseInt(v string) (int64, bool) {
	s := strings.ReplaceAll(v, "_", "")
	sign := int64(1)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	var i int64
	var err error
	switch {
	case s == "0":
		return 0, true
	case strings.HasPrefix(s, "0b"):
		i, err = strconv.ParseInt(s[2:], 2, 64)
	case strings.HasPrefix(s, "0x"):
		i, err = strconv.ParseInt(s[2:], 16, 64)
	case s[0] == '0':
		i, err = strconv.ParseInt(s, 8, 64)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, perr := strconv.ParseInt(part, 10, 64)
			if perr != nil {
				return 0, false
			}
			i = i*60 + d
		}
	default:
		i, err = strconv.ParseInt(s, 10, 64)
	}
	return sign * i, err == nil
}

// yaml11ParseFloat is PyYAML's construct_yaml_float.
func yaml11ParseFloat(v string) Float {
	s := strings.ToLower(strings.ReplaceAll(v, "_", ""))
	sign := 1.0
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return Float{F: sign * math.Inf(1)}
	case s == ".nan":
		return Float{F: math.NaN()}
	case strings.Contains(s, ":"):
		parts := strings.Split(s, ":")
		f := 0.0
		for _, p := range parts {
			d, _ := strconv.ParseFloat(p, 64)
			f = f*60 + d
		}
		return Float{F: sign * f}
	}
	f, _ := strconv.ParseFloat(s, 64)
	dec, _ := order.CanonicalDecimal(strings.ReplaceAll(v, "_", ""))
	return Float{F: sign * f, Dec: dec}
}

// yamlText renders a resolved scalar for comparison with PyYAML's (ints in
// decimal, floats as Python's repr, booleans true/false, null empty, dates
// ISO).
func yamlText(typ string, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return strconv.FormatInt(x, 10)
	case Float:
		return pyRepr(x.F)
	case order.Date:
		return x.String()
	case string:
		return x
	}
	return typ
}
