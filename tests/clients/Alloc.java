// SPDX-License-Identifier: GPL-2.0-or-later
// Alloc.java - the JVM client of tests/clients/jvm.bats: allocation-heavy
// worker threads that check their own data, and short-lived threads that
// come and go, while pidmempolicy sets every thread's policy.
//
//   java Alloc WORKERS SECONDS [STOPFILE]
//
// Each worker keeps a ring of long[] arrays, every element a function of
// the array's seed and index; it replaces one array (the old one becomes
// garbage, with more short-lived garbage besides) and checks another in
// full, over and over.  Every 20 ms a thread is started that allocates,
// checks and exits: threads are created (from threads the tool set) and
// destroyed during the flips.  It ends after SECONDS, or as soon as STOPFILE
// exists.  Prints "ready" once every worker runs, then
// "ok rounds=N checked=M threads=T" and exits 0; the first wrong element
// prints "MISMATCH ..." and exits 1.
import java.io.File;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

public final class Alloc {
	static final AtomicLong rounds = new AtomicLong();
	static final AtomicLong checked = new AtomicLong();
	static final AtomicLong started = new AtomicLong();
	static final AtomicBoolean stop = new AtomicBoolean();
	static volatile Object sink;

	static long value(long seed, int i) {
		long x = seed + 0x9E3779B97F4A7C15L * (i + 1);
		x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
		return x ^ (x >>> 27);
	}

	static long[] make(long seed, int n) {
		long[] a = new long[n + 1];
		a[0] = seed;
		for (int i = 1; i <= n; i++)
			a[i] = value(seed, i);
		return a;
	}

	static void check(long[] a, String who) {
		long seed = a[0];
		for (int i = 1; i < a.length; i++)
			if (a[i] != value(seed, i)) {
				System.out.println("MISMATCH in " + who + ": seed " + seed + " index " + i + " has "
						   + a[i] + ", expected " + value(seed, i));
				System.out.flush();
				Runtime.getRuntime().halt(1);
			}
		checked.incrementAndGet();
	}

	static void work(int id, long deadline, boolean forever) {
		SplittableRandom r = new SplittableRandom(id * 7919L + 1);
		long[][] ring = new long[64][];
		String who = Thread.currentThread().getName();

		for (int s = 0; s < ring.length; s++)
			ring[s] = make(r.nextLong(), 1 + r.nextInt(16384));
		do {
			int s = r.nextInt(ring.length);
			check(ring[s], who);
			ring[s] = make(r.nextLong(), 1 + r.nextInt(16384));
			sink = new byte[1024 + r.nextInt(256 * 1024)];	/* garbage */
			check(ring[r.nextInt(ring.length)], who);
			rounds.incrementAndGet();
		} while ((forever || System.nanoTime() < deadline) && !stop.get());
		for (long[] a : ring)
			check(a, who);
	}

	public static void main(String[] args) throws Exception {
		int workers = Integer.parseInt(args[0]);
		double seconds = Double.parseDouble(args[1]);
		long end = System.nanoTime() + (long)(seconds * 1e9);
		File stopFile = args.length > 2 ? new File(args[2]) : null;
		Thread[] t = new Thread[workers];

		for (int i = 0; i < workers; i++) {
			final int id = i;
			t[i] = new Thread(() -> work(id, 0, true), "alloc-worker-" + i);
			t[i].start();
		}
		System.out.println("ready");
		System.out.flush();
		for (int n = 0; System.nanoTime() < end && (stopFile == null || !stopFile.exists()); n++) {
			final int id = 1000 + n;
			Thread s = new Thread(() -> work(id, System.nanoTime() + 5_000_000L, false), "alloc-short-" + n);
			s.start();
			started.incrementAndGet();
			Thread.sleep(20);
		}
		stop.set(true);
		for (Thread w : t)
			w.join();
		System.out.println("ok rounds=" + rounds.get() + " checked=" + checked.get() + " threads="
				   + started.get());
	}
}
