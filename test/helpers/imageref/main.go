// The image reference reader under the kubelet, as a test tool: distribution's reference package (Debian's
// golang-github-docker-distribution-dev 2.8.2, github.com/docker/distribution/reference) with go-digest
// (golang-github-opencontainers-go-digest-dev 1.0.0). The kubelet parses every image with ParseNormalizedNamed
// (k8s.io/kubernetes pkg/util/parsers ParseImageName) before it pulls. Each input line is a JSON string; each output
// line is "ok" or the error. Built by test/core/config/image-reference.test.ts in GOPATH mode (.ci/run extracts both
// packages' sources: scripts/go-image-reference.sh).
package main

import (
	"bufio"
	_ "crypto/sha256"
	_ "crypto/sha512"
	"encoding/json"
	"fmt"
	"os"

	"github.com/docker/distribution/reference"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var s string
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if _, err := reference.ParseNormalizedNamed(s); err != nil {
			fmt.Fprintln(out, "error: "+err.Error())
		} else {
			fmt.Fprintln(out, "ok")
		}
	}
}
