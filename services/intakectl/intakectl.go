// Package intakectl is docintake's operator and template-author CLI. Every
// command is a function of (ctx, args, env, stdout, stderr) so tests call it
// directly; commands register themselves in their own files.
package intakectl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Env is what a command gets from the process.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// command is one subcommand; run returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, env Env) int
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, env Env) int) {
	if _, dup := commands[name]; dup {
		panic("intakectl: command registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

// Main runs the CLI with args (without the program name) and returns the
// exit code: 0 ok, 1 error, 2 usage; commands may define more.
func Main(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "intakectl: unknown command %q\n\n", args[0])
		usage(env.Stderr)
		return 2
	}
	return c.run(ctx, args[1:], env)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: intakectl <command> [flags] [args]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}

// newFlags returns a flag set that reports errors to env.Stderr instead of
// exiting.
func newFlags(name string, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet("intakectl "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// parseFlags parses args allowing flags after positional arguments
// (`intakectl extract FILE --output xml`), which the flag package alone
// does not. It returns the positional arguments, or ok=false after the flag
// set printed the problem (exit code 2).
func parseFlags(fs *flag.FlagSet, args []string) (rest []string, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, false
		}
		args = fs.Args()
		// Take positional arguments up to the next flag, then parse again.
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			rest = append(rest, args[0])
			args = args[1:]
		}
		if len(args) == 0 {
			return rest, true
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), true
		}
	}
}

// fail prints an error and returns exit code 1.
func fail(env Env, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "intakectl: "+format+"\n", args...)
	return 1
}
