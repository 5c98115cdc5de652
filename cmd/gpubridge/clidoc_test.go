package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

// The command list of docs/cli.md sits between these lines; it is made
// from the command tree (commandList) and kept by TestCLIDocCommandList.
const (
	cliDoc       = "../../docs/cli.md"
	cliListBegin = "<!-- command list: made by TestCLIDocCommandList (GPUBRIDGE_UPDATE_DOCS=1 rewrites it) -->\n"
	cliListEnd   = "<!-- end of command list -->\n"
)

// commandList is every visible command with its usage and summary, as a
// Markdown table, in the order of the tree.
func commandList(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			if !sub.HasAvailableSubCommands() {
				use := strings.TrimPrefix(sub.CommandPath(), root.Name()+" ")
				if _, rest, ok := strings.Cut(sub.Use, " "); ok {
					use += " " + rest
				}
				fmt.Fprintf(&b, "| `%s` | %s |\n", strings.ReplaceAll(use, "|", `\|`), strings.ReplaceAll(sub.Short, "|", `\|`))
			}
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}

// TestCLIDocCommandList: docs/cli.md lists every command as the command
// tree has it (a command added, renamed or described anew fails until the
// list is made again with GPUBRIDGE_UPDATE_DOCS=1).
func TestCLIDocCommandList(t *testing.T) {
	b, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	head, rest, ok1 := strings.Cut(doc, cliListBegin)
	_, tail, ok2 := strings.Cut(rest, cliListEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the command list's marker lines %q and %q", cliDoc, cliListBegin, cliListEnd)
	}
	want := commandList(newRootCmd(&App{Env: &app.Env{}}))
	got, _, _ := strings.Cut(rest, cliListEnd)
	if got == want {
		return
	}
	if os.Getenv("GPUBRIDGE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(cliDoc, []byte(head+cliListBegin+want+cliListEnd+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/cli.md's command list is not the command tree's; run GPUBRIDGE_UPDATE_DOCS=1 go test -run TestCLIDocCommandList ./cmd/gpubridge/\nwant:\n%s", want)
}
