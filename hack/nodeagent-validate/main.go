// Command nodeagent-validate checks gardener-node-agent configuration files as gardener-node-agent itself reads
// them: decoded by its own scheme and codec (with its defaults), then validated by its own validation. It also
// decodes strictly, because node-agent's decoder drops unknown or misspelt fields silently.
//
// Usage: nodeagent-validate FILE...   (prints one line per problem, exits 1 on any; -version prints the
// gardener module version it was built with)
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	nodeagentconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/nodeagent/v1alpha1"
	nodeagentvalidation "github.com/gardener/gardener/pkg/api/config/nodeagent/v1alpha1/validation"
)

const gardenerModule = "github.com/gardener/gardener"

// decoders: node-agent's own (cmd/gardener-node-agent/app/options.go), and the same scheme decoding strictly.
func decoders() (runtime.Decoder, runtime.Decoder) {
	scheme := runtime.NewScheme()
	utilruntime.Must(nodeagentconfigv1alpha1.AddToScheme(scheme))
	lenient := serializer.NewCodecFactory(scheme).UniversalDecoder()
	strict := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder()
	return lenient, strict
}

// check returns every problem node-agent (or a strict read) finds in one file.
func check(path string, lenient, strict runtime.Decoder) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	config := &nodeagentconfigv1alpha1.NodeAgentConfiguration{}
	if err := runtime.DecodeInto(lenient, data, config); err != nil {
		return []string{"node-agent cannot decode it: " + err.Error()}
	}
	var problems []string
	if err := runtime.DecodeInto(strict, data, &nodeagentconfigv1alpha1.NodeAgentConfiguration{}); err != nil {
		problems = append(problems, "strict decoding: "+err.Error())
	}
	for _, e := range nodeagentvalidation.ValidateNodeAgentConfiguration(config) {
		problems = append(problems, "node-agent validation: "+e.Error())
	}
	return problems
}

func gardenerVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == gardenerModule {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "-version" || args[0] == "--version") {
		fmt.Println(gardenerVersion())
		return
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: nodeagent-validate FILE...")
		os.Exit(2)
	}
	lenient, strict := decoders()
	failed := false
	for _, path := range args {
		for _, problem := range check(path, lenient, strict) {
			fmt.Printf("%s: %s\n", path, problem)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
