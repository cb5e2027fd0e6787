// go-yaml v2 (gopkg.in/yaml.v2, the reader under kubectl, Argo CD and Flux through sigs.k8s.io/yaml), as a test tool:
// each input line is a JSON string holding a YAML document with a key "v"; each output line says what go-yaml
// decodes "v" to: `string <json>` or its Go type. Built by test/core/yaml-goyaml.test.ts with Debian's golang-go
// and golang-gopkg-yaml.v2-dev (GOPATH mode, no network).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	yaml "gopkg.in/yaml.v2"
)

// Reads one JSON string per line: a YAML document; prints the Go type and value go-yaml v2 decodes its "v" key to.
func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	for in.Scan() {
		var doc string
		if err := json.Unmarshal(in.Bytes(), &doc); err != nil {
			fmt.Println("bad-input")
			continue
		}
		var out map[string]interface{}
		if err := yaml.Unmarshal([]byte(doc), &out); err != nil {
			fmt.Println("error")
			continue
		}
		v := out["v"]
		s, isString := v.(string)
		b, _ := json.Marshal(s)
		if isString {
			fmt.Printf("string %s\n", b)
		} else {
			fmt.Printf("%T\n", v)
		}
	}
}
