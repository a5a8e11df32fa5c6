package postgres_test

import "os"

var pid = os.Getpid()
