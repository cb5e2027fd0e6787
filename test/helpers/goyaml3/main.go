// go-yaml v3 (gopkg.in/yaml.v3, the reader Pulumi loads Pulumi.yaml and Pulumi.<stack>.yaml with:
// pulumi/pulumi sdk/go/common/encoding/marshal.go), as a test tool: each input line is a JSON string holding a YAML
// document; each output line is that document decoded into `any`, as Pulumi's LoadProjectStackBytes first decodes it,
// written as typed JSON ({"t":"int","v":"8"}; maps as sorted [key, value] pairs), or {"t":"error","v":<message>}.
// Built by test/cli/input/go-yaml-v3.test.ts with Debian's golang-go and golang-gopkg-yaml.v3-dev (GOPATH mode).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	yaml "gopkg.in/yaml.v3"
)

type typed struct {
	T string      `json:"t"`
	V interface{} `json:"v"`
}

func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func pairs(keys []interface{}, get func(interface{}) interface{}) typed {
	out := make([][2]typed, 0, len(keys))
	for _, k := range keys {
		out = append(out, [2]typed{convert(k), convert(get(k))})
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i][0].V) < fmt.Sprint(out[j][0].V) })
	return typed{"map", out}
}

// convert writes a decoded value as typed JSON: Go's own type, so 8 and 8.0 and "8" stay apart.
func convert(v interface{}) typed {
	switch x := v.(type) {
	case nil:
		return typed{"null", nil}
	case bool:
		return typed{"bool", x}
	case int:
		return typed{"int", strconv.Itoa(x)}
	case int64:
		return typed{"int", strconv.FormatInt(x, 10)}
	case uint64:
		return typed{"int", strconv.FormatUint(x, 10)}
	case float64:
		return typed{"float", floatText(x)}
	case string:
		return typed{"str", x}
	case time.Time:
		return typed{"time", x.String()}
	case []interface{}:
		items := make([]typed, len(x))
		for i, item := range x {
			items[i] = convert(item)
		}
		return typed{"seq", items}
	case map[string]interface{}:
		keys := make([]interface{}, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		return pairs(keys, func(k interface{}) interface{} { return x[k.(string)] })
	case map[interface{}]interface{}:
		keys := make([]interface{}, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		return pairs(keys, func(k interface{}) interface{} { return x[k] })
	}
	return typed{"other", fmt.Sprintf("%T", v)}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var doc string
		result := typed{"error", "bad input line"}
		if err := json.Unmarshal(in.Bytes(), &doc); err == nil {
			var v interface{}
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				result = typed{"error", err.Error()}
			} else {
				result = convert(v)
			}
		}
		line, _ := json.Marshal(result)
		out.Write(append(line, '\n'))
	}
}
