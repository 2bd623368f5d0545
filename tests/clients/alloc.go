// SPDX-License-Identifier: GPL-2.0-or-later
// alloc.go - the Go client of tests/clients/go.bats: goroutines that
// allocate and check their own data, while pidmempolicy sets every thread
// of the process.  Run with GOMAXPROCS=2:
//
//	alloc -goroutines 16 -locked 8 -seconds 20 [-stop FILE]
//
// Each allocating goroutine keeps a ring of []uint64, every element a
// function of the slice's seed and index, replaces one slice (garbage for
// the collector) and checks another, over and over.  -locked goroutines
// hold an OS thread each (runtime.LockOSThread) and sleep, so that the
// process has more threads than GOMAXPROCS; every 20 ms one more locked
// goroutine checks a slice and returns without unlocking, which ends its
// thread: threads are created and destroyed during the flips.  It ends
// after -seconds, or as soon as the -stop file exists.  Prints
// "ready", then "ok rounds=N checked=M threads=T" and exits 0; the first
// wrong element prints "MISMATCH ..." and exits 1.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

var rounds, checked, ended atomic.Int64

func value(seed uint64, i int) uint64 {
	x := seed + 0x9E3779B97F4A7C15*uint64(i+1)
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	return x ^ (x >> 27)
}

func mk(seed uint64, n int) []uint64 {
	a := make([]uint64, n+1)
	a[0] = seed
	for i := 1; i <= n; i++ {
		a[i] = value(seed, i)
	}
	return a
}

func check(a []uint64, who string) {
	seed := a[0]
	for i := 1; i < len(a); i++ {
		if a[i] != value(seed, i) {
			fmt.Printf("MISMATCH in %s: seed %d index %d has %d, expected %d\n", who, seed, i, a[i], value(seed, i))
			os.Exit(1)
		}
	}
	checked.Add(1)
}

var sink []byte

func work(id int, stop *atomic.Bool) {
	r := rand.New(rand.NewSource(int64(id)*7919 + 1))
	ring := make([][]uint64, 64)
	who := fmt.Sprintf("goroutine %d", id)
	for s := range ring {
		ring[s] = mk(r.Uint64(), 1+r.Intn(16384))
	}
	for !stop.Load() {
		s := r.Intn(len(ring))
		check(ring[s], who)
		ring[s] = mk(r.Uint64(), 1+r.Intn(16384))
		sink = make([]byte, 1024+r.Intn(256*1024))
		check(ring[r.Intn(len(ring))], who)
		rounds.Add(1)
	}
	for _, a := range ring {
		check(a, who)
	}
}

func main() {
	goroutines := flag.Int("goroutines", 16, "allocating goroutines")
	locked := flag.Int("locked", 8, "goroutines that hold an OS thread")
	seconds := flag.Float64("seconds", 20, "how long")
	stopFile := flag.String("stop", "", "end when this file exists")
	flag.Parse()

	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < *goroutines; i++ {
		wg.Add(1)
		go func(id int) { defer wg.Done(); work(id, &stop) }(i)
	}
	for i := 0; i < *locked; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for !stop.Load() {
				check(mk(uint64(id), 512), "locked")
				time.Sleep(10 * time.Millisecond)
			}
		}(i)
	}
	fmt.Println("ready")
	end := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	stopped := func() bool {
		if *stopFile == "" {
			return false
		}
		_, err := os.Stat(*stopFile)
		return err == nil
	}
	for n := 0; time.Now().Before(end) && !stopped(); n++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			check(mk(uint64(id), 4096), "short")
			ended.Add(1)
		}(10000 + n)
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	fmt.Printf("ok rounds=%d checked=%d threads=%d\n", rounds.Load(), checked.Load(), ended.Load())
}
