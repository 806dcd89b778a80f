package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagSink stands for a command's stderr while lockcheck docs lists its
// flags: parse hands it the command's flag set instead of parsing. The
// flags are registered inline in each command's run function, so running
// it with a sink is how the reference reads exactly the flags the command
// parses, with no second list to keep in step. What the command's usage
// prints lands in the buffer.
//
// A sink that settles lets parse go on and stops the command at settled
// instead, keeping every flag's value there and what the command hands
// on: how the tests compare a command's printed defaults with what it
// applies.
type flagSink struct {
	bytes.Buffer
	fs *flag.FlagSet
	// settle: parse goes on; settled stops the command
	settle bool
	// values are the flags' values at settled (nil: not reached), by name
	values map[string]string
	// handedOn is what the command gave settled
	handedOn []any
}

// commandFlags builds a command's flag set without running the command:
// its run function stops at parse. The context is cancelled and the
// arguments are -h, so that a command that did work before parsing its
// flags would stop at once; it is reported rather than listed.
func commandFlags(c command) (fs *flag.FlagSet, intro string, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sink := &flagSink{}
	c.run(ctx, []string{"-h"}, io.Discard, sink)
	if sink.fs == nil {
		return nil, "", fmt.Errorf("lockcheck %s did not hand its flag set to parse: build the flag set with newFlags and parse it before doing anything", c.name)
	}
	fs = sink.fs
	sink.Reset()
	fs.SetOutput(sink)
	fs.Usage()
	var defaults bytes.Buffer
	fs.SetOutput(&defaults)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	return fs, usageIntro(strings.TrimSuffix(sink.String(), defaults.String())), nil
}

// usageIntro is what a command's -h prints above its flags, without the
// flag package's own header.
func usageIntro(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "Usage of ") && !strings.Contains(s, "\n") {
		return ""
	}
	return strings.TrimSpace(strings.TrimSuffix(s, "Flags:"))
}

// cliPage is docs/reference/cli.md: every command, and every flag with its
// default and usage.
func cliPage() (string, error) {
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n" + generatedNote + "\n")
	b.WriteString("`lockcheck COMMAND -h` prints the same for one command. Exit codes, unless a command says otherwise below: 0 done and safe (or the gate met), 1 a violation (or the gate not met), 2 bad input, a setup failure or an interrupted run, 3 a check the checker could not decide.\n\n")
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "| [%s](#lockcheck-%s) | %s |\n", c.name, c.name, cell(c.summary))
	}
	for _, c := range commands() {
		fs, intro, err := commandFlags(c)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n## lockcheck %s\n\n%s.\n\n", c.name, mdText(sentence(c.summary)))
		if intro != "" {
			fmt.Fprintf(&b, "```text\n%s\n```\n\n", intro)
		}
		b.WriteString(flagTable(fs))
	}
	return b.String(), nil
}

// flagTable lists a flag set's flags in name order, as -h does.
func flagTable(fs *flag.FlagSet) string {
	var b strings.Builder
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n == 0 {
			b.WriteString("| flag | default | what it sets |\n|---|---|---|\n")
		}
		n++
		kind, usage := flag.UnquoteUsage(f)
		name := "`--" + f.Name + "`"
		if kind != "" {
			name += " " + kind
		}
		def := ""
		if f.DefValue != "" {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, def, cell(usage))
	})
	if n == 0 {
		return "No flags.\n"
	}
	return b.String()
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(mdText(strings.Join(strings.Fields(s), " ")), "|", `\|`)
}

// mdText keeps text that names placeholders (<time>) from being read as
// HTML.
func mdText(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// sentence starts s with a capital letter.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
