// Command intakectl is docintake's operator and template CLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/docintake/docintake/services/intakectl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := intakectl.Main(ctx, os.Args[1:], intakectl.Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
