package template

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// FirstMatch exposes the whole first match of re in s ("" if none) to tests.
func FirstMatch(re *Regex, s string) string {
	m, err := re.search(nil, s)
	if err != nil || m == nil {
		return ""
	}
	return s[m[0]:m[1]]
}

// PyRepr exposes pyRepr to tests.
var PyRepr = pyRepr

// YAMLScalarLines lists every scalar of a template as the loader resolves
// it, one "path<TAB>type<TAB>value" line each, in the form of
// testdata/yaml11/gen.py (keys joined by "/", list indexes as [i],
// non-string keys as type:value; a repeated key: the last value wins, as in
// a Python dict).
func YAMLScalarLines(file string, data []byte) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	isJSON := strings.EqualFold(filepath.Ext(file), ".json")
	var out []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		n = resolve(n)
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			var keys []string
			vals := map[string]*yaml.Node{}
			for _, kv := range pairs(n) {
				typ, v := yamlScalar(resolve(kv[0]), isJSON)
				k := yamlText(typ, v)
				if typ != "str" {
					k = typ + ":" + k
				}
				if _, ok := vals[k]; !ok {
					keys = append(keys, k)
				}
				vals[k] = kv[1]
			}
			for _, k := range keys {
				walk(vals[k], path+"/"+k)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			typ, v := yamlScalar(n, isJSON)
			out = append(out, path+"\t"+typ+"\t"+yamlText(typ, v))
		}
	}
	walk(&doc, "")
	sort.Strings(out)
	return out, nil
}
