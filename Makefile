# SPDX-License-Identifier: Apache-2.0
# dsnfs: one entry point.  make | make run | make test | make deps | make fuzz
#
# Sources are found by wildcard, so adding a file to a module needs no edit
# here.  Libraries (build/lib):
#   libdsxdr.a   rpcgen output of nfsd/proto/*.x + nfsd/proto/*.c
#   libdsrpc.a   nfsd/rpc/record.c msg.c pool.c: pure, shared with perf/dsload
#   libdsnfsd.a  the rest of nfsd/ (not main.c, not nfsd/ctl/)
#   libvmdk.a    vmdk/ (not dsvmdk.c)
#   libdsload.a  perf/dsload/ (not main.c): dsload and its unit tests
# A sanitizer build lives in its own tree: make BUILD=build/san SAN=1.

BUILD ?= build
# The one version of every program, the man pages and the package.
VERSION := $(shell cat VERSION)
SAN ?=
CC ?= cc

ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
endif
ifeq ($(FUZZ),1)
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
endif

CPPFLAGS := -D_GNU_SOURCE -I. -I$(BUILD)/gen -I/usr/include/tirpc \
	-DDSNFS_VERSION='"$(VERSION)"'
WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(CFLAGS) $(WARN) $(SANFLAGS) -MMD -MP
GEN_CFLAGS := -std=gnu11 $(CFLAGS) -w $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS := -ltirpc -lev -luring -lxxhash -lnettle -linih -lmicrohttpd -ljansson -lsystemd \
	-lpthread -lm -lz -lcurl
# The CephFS backend's libraries: only dsnfsd and the backend's own tests
# (CEPH_TESTS: test_store_cephfs*, fuzz_ceph_*) call them; the tools, the
# other fuzzers and tests do not link them (TARGET_LIBS, set per target
# below).
CEPH_LIBS := -lcephfs -lrados

PROTO_X := $(wildcard nfsd/proto/*.x)
GEN_H := $(PROTO_X:nfsd/proto/%.x=$(BUILD)/gen/%.h)
GEN_C := $(PROTO_X:nfsd/proto/%.x=$(BUILD)/gen/%_xdr.c)

XDR_SRC := $(wildcard nfsd/proto/*.c)
RPC_SRC := nfsd/rpc/record.c nfsd/rpc/msg.c nfsd/rpc/pool.c
CTL_SRC := $(wildcard nfsd/ctl/*.c)
NFSD_SRC := $(filter-out nfsd/server/main.c $(RPC_SRC) $(XDR_SRC) $(CTL_SRC), \
	$(wildcard nfsd/*.c nfsd/*/*.c nfsd/*/*/*.c))
VMDK_SRC := $(filter-out vmdk/dsvmdk.c, $(wildcard vmdk/*.c))
DSLOAD_SRC := $(wildcard perf/dsload/*.c)
DSLOAD_LIB_SRC := $(filter-out perf/dsload/main.c, $(DSLOAD_SRC))
TESTLIB_SRC := $(wildcard tests/lib/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
# man/NAME.SECTION.scd -> $(BUILD)/man/NAME.SECTION (scdoc)
MAN_SRC := $(wildcard man/*.scd)
MANS := $(MAN_SRC:man/%.scd=$(BUILD)/man/%)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIB_XDR := $(BUILD)/lib/libdsxdr.a
LIB_RPC := $(BUILD)/lib/libdsrpc.a
LIB_NFSD := $(BUILD)/lib/libdsnfsd.a
LIB_VMDK := $(BUILD)/lib/libvmdk.a
LIB_TEST := $(BUILD)/lib/libdstest.a
LIB_DSLOAD := $(if $(DSLOAD_LIB_SRC),$(BUILD)/lib/libdsload.a)
ALL_LIBS := $(LIB_NFSD) $(LIB_RPC) $(LIB_VMDK) $(LIB_XDR)
LINK_LIBS := -Wl,--start-group $(ALL_LIBS) -Wl,--end-group $(LDLIBS)
# tests/lib is an archive scanned first: a test pulls in only the fakes it
# uses, and log_capture.o takes the place of nfsd/log.o.
TEST_LINK_LIBS := -Wl,--start-group $(LIB_TEST) $(ALL_LIBS) $(LIB_DSLOAD) \
	-Wl,--end-group $(LDLIBS)

PROGS := $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsvmdk
ifneq ($(DSLOAD_SRC),)
PROGS += $(BUILD)/bin/dsload
endif
ifneq ($(CTL_SRC),)
PROGS += $(BUILD)/bin/dsnfsctl
endif
UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_BINS := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

.PHONY: all run test unit deps deps-check fuzz fuzz-build fuzz-bins format \
	format-check clean man progs install deb nfsd vmdk lab lab-loaded lab-clones lab-clone-reads lab-zeroing bench bench-ceph bench-kclient bench-profile bench-vmdk bench-scale \
	bench-replication lab-replication soak abuse
.DEFAULT_GOAL := all

all: deps-check $(PROGS) $(UNIT_BINS) $(MANS)

man: $(MANS)

# The programs and pages alone, without deps-check (debian/rules builds
# with this, in a tree of its own).
progs: $(PROGS) $(MANS)

# Installs what the package holds under DESTDIR (debian/rules).
PREFIX ?= /usr
install: progs
	install -D -m 0755 $(BUILD)/bin/dsnfsd $(DESTDIR)$(PREFIX)/sbin/dsnfsd
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/bin/dsnfsctl $(BUILD)/bin/dsvmdk \
		$(BUILD)/bin/dsload $(DESTDIR)$(PREFIX)/bin/
	for m in $(MANS); do \
		s=$${m##*.}; \
		install -D -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}; \
	done
	install -D -m 0644 etc/package/dsnfsd.conf $(DESTDIR)/etc/dsnfs/dsnfsd.conf
	install -D -m 0644 etc/prices.conf $(DESTDIR)/etc/dsnfs/prices.conf

nfsd: $(BUILD)/bin/dsnfsd
vmdk: $(BUILD)/bin/dsvmdk

# ---- generated XDR (never committed) -------------------------------------
# Kept after the build: they are what a reader compares the .x with.
.SECONDARY: $(GEN_H) $(GEN_C)

$(BUILD)/gen/%.h: nfsd/proto/%.x
	@mkdir -p $(@D)
	rm -f $@ && rpcgen -h -o $@ $<

$(BUILD)/gen/%_xdr.c: nfsd/proto/%.x $(BUILD)/gen/%.h
	@mkdir -p $(@D)
	rm -f $@ && rpcgen -c -o $@ $<
	sed -i 's|#include "$(BUILD)/gen/\(.*\)"|#include "\1"|; s|#include "nfsd/proto/\(.*\)"|#include "\1"|' $@

# The admin endpoint's page (nfsd/admin/dashboard.c), built into dsnfsd.
DASHBOARD_FILES := $(wildcard nfsd/admin/dashboard/*)
$(BUILD)/gen/dashboard_assets.c: $(DASHBOARD_FILES)
	@mkdir -p $(@D)
	{ echo '/* generated by make from nfsd/admin/dashboard/: never edit */'; \
	for f in $(notdir $(DASHBOARD_FILES)); do \
		n=dashboard_$$(echo $$f | tr '.-' '__'); \
		echo "const unsigned char $$n[] = {"; \
		xxd -i <nfsd/admin/dashboard/$$f; \
		echo "};"; \
		echo "const unsigned int $${n}_len = sizeof($$n);"; \
	done; } >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_H)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(GEN_CFLAGS) -c -o $@ $<

# ---- our objects ----------------------------------------------------------
# deps-check is order-only: under `make -j` it runs (and installs missing
# headers) before the first compile, and never forces a rebuild.
$(BUILD)/obj/%.o: %.c $(GEN_H) | deps-check
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(LIB_XDR): $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_C)) $(call obj,$(XDR_SRC))
$(LIB_RPC): $(call obj,$(RPC_SRC))
$(LIB_NFSD): $(call obj,$(NFSD_SRC)) $(BUILD)/obj/gen/dashboard_assets.o
$(LIB_VMDK): $(call obj,$(VMDK_SRC))
$(LIB_TEST): $(call obj,$(TESTLIB_SRC))
$(BUILD)/lib/libdsload.a: $(call obj,$(DSLOAD_LIB_SRC))
$(BUILD)/lib/%.a:
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# The files that print --version are rebuilt when VERSION changes.
$(call obj,nfsd/server/main.c vmdk/dsvmdk.c perf/dsload/main.c nfsd/ctl/dsnfsctl.c): VERSION

$(BUILD)/bin/dsnfsd: $(call obj,nfsd/server/main.c) $(ALL_LIBS)
$(BUILD)/bin/dsnfsd: TARGET_LIBS := $(CEPH_LIBS)
$(BUILD)/bin/dsvmdk: $(call obj,vmdk/dsvmdk.c) $(ALL_LIBS)
$(BUILD)/bin/dsload: $(call obj,perf/dsload/main.c) $(LIB_DSLOAD) $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -Wl,--start-group \
		$(LIB_DSLOAD) $(ALL_LIBS) -Wl,--end-group $(LDLIBS) -lcurl
# dsnfsctl speaks HTTP and HTTPS to the admin endpoint through libcurl.
$(BUILD)/bin/dsnfsctl: $(call obj,$(CTL_SRC)) $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBS) -lcurl
# A hypervisor's reads of a VMDK chain over NFS (libnfs), for a lab only.
$(BUILD)/bin/vmdkbench: $(call obj,perf/clones/vmdkbench.c) $(LIB_VMDK)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_VMDK) -lnfs -lpthread -lz
$(BUILD)/bin/%:
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBS) $(TARGET_LIBS)

CEPH_TESTS := $(filter $(BUILD)/tests/test_store_cephfs%,$(UNIT_BINS))
$(CEPH_TESTS): TARGET_LIBS := $(CEPH_LIBS)
$(BUILD)/tests/%: $(call obj,tests/unit/%.c) $(LIB_TEST) $(ALL_LIBS) $(LIB_DSLOAD)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(TEST_LINK_LIBS) $(TARGET_LIBS) \
		-lcmocka

$(BUILD)/fuzz/%: $(call obj,tests/fuzz/%.c) $(LIB_TEST) $(ALL_LIBS) $(LIB_DSLOAD)
	@mkdir -p $(@D)
	$(CC) -fsanitize=fuzzer,address,undefined -o $@ $(filter %.o,$^) \
		$(TEST_LINK_LIBS) $(TARGET_LIBS)
$(filter $(BUILD)/fuzz/fuzz_ceph_%,$(FUZZ_BINS)): TARGET_LIBS := $(CEPH_LIBS)

$(BUILD)/man/%: man/%.scd
	@mkdir -p $(@D)
	scdoc <$< >$@.tmp && mv $@.tmp $@

# ---- entry points ---------------------------------------------------------
deps:
	@mk/deps.sh

# Cheap check so a plain `make` on a fresh machine installs what it needs.
deps-check:
	@mk/deps.sh --quiet

# Every tool the README names next (dsnfsctl, dsvmdk, dsload) and the man
# pages, not dsnfsd alone, built on every core.
run: deps-check
	$(MAKE) -j$(JOBS) progs
	mkdir -p var/ds1 var/ds2 var/ds3 var/ds4 var/state
	$(BUILD)/bin/dsnfsd -c etc/dsnfsd.conf -f

# The plain dsnfsd too: a test that measures memory (t8106) needs a binary
# without ASan, whose RSS means nothing.  The builds use every core.
JOBS ?= $(shell nproc)
test: deps
	$(MAKE) format-check
	$(MAKE) -j$(JOBS) BUILD=build/san SAN=1 all
	$(MAKE) -j$(JOBS) build/bin/dsnfsd
	TEST_FUZZ_BUILD='$(FUZZ_BUILD)' \
		DSNFS_REL_BIN=$(CURDIR)/build/bin tests/run.sh build/san build/fuzz

unit: deps
	$(MAKE) BUILD=build/san SAN=1 all
	tests/run.sh --unit-only build/san

# The fuzz targets' build; `make test` hands it to tests/run.sh, which runs
# it at nice 19 beside the tests (deps is checked by then).
FUZZ_BUILD = $(MAKE) -j$(JOBS) BUILD=build/fuzz FUZZ=1 CC=clang fuzz-bins
fuzz-build: deps
	$(FUZZ_BUILD)

fuzz-bins: $(FUZZ_BINS)

fuzz: fuzz-build
	tests/fuzz/run.sh build/fuzz $${FUZZ_SECONDS:-60}

# The anf-avs lab profile end to end (docs/dsload.md): dsload fits the
# model to five published rows, measures the machine's ceiling on an
# uncapped dsnfsd, picks the scale, starts dsnfsd with the fitted caps and
# runs the 14 scenarios of docs/published.md section 1, verifying data.
# Exit 0 exactly when every predicted ratio is within 15%.  Results,
# profile.png and profile.svg: var/lab/.
lab: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	$(BUILD)/bin/dsload profile anf-avs --server-config etc/lab/anf-avs.conf \
		--dsnfsd $(BUILD)/bin/dsnfsd --out var/lab

# The same beside stress-ng --cpu 8 (a busy machine): var/lab-loaded/.
lab-loaded: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	perf/bench/lab-loaded.sh $(BUILD) var/lab-loaded

# A full clone by the storage against the same clone by a client over NFS
# (qemu-img convert, nfs-cp), 1, 4 and 16 GiB used in a 20 GiB thin disk: table
# and plot in var/lab/clones (docs/dsvmdk.md, "Through the server"; root).
lab-clones: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsnfsctl $(BUILD)/bin/dsvmdk
	perf/clones/lab.sh $(BUILD)/bin

# 8 KiB random reads at depth 16 through NFS on a full, a linked and a
# native clone, part of each rewritten, on a loop-mounted XFS: table and plot
# in var/lab/clone-reads (docs/dsvmdk.md, "make lab-clone-reads"; root).
lab-clone-reads: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsnfsctl $(BUILD)/bin/dsvmdk $(BUILD)/bin/vmdkbench
	perf/clones/reads.sh $(BUILD)/bin

# Thin, lazy- and eager-zeroed disks written through NFS in their zeroing
# phase and after it, with and without VMFS's zeroing on first write:
# table and plot in var/lab/zeroing (docs/dsvmdk.md, "make lab-zeroing").
lab-zeroing: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsvmdk
	perf/zeroing/lab.sh $(BUILD)/bin

# Lab 10 (docs/labs.md): two dsnfsd joined by a replication
# relation under a dsload write load; the destination down and back, the
# source lost, the break; the lag over time into docs/img/lab10-lag.png
# (root, gnuplot; about 2 min).
lab-replication: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	BENCH_LAG_PNG=docs/img/lab10-lag.png perf/bench/replication-lag.sh $(BUILD) --lab

# Benchmarks and the soak print their figures; none is part of `make test`.
# dsnfsd against nfs-ganesha, side by side (docs/bench.md).
bench: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	perf/bench/run.sh $(BUILD)

# The kernel client (the kclient guest) with fio: dsnfsd with and without
# its intent log against nfs-ganesha (docs/bench.md, "The kernel client").
bench-kclient: deps-check $(BUILD)/bin/dsnfsd
	perf/bench/kclient.sh $(BUILD)

# dsnfsd on CephFS against nfs-ganesha FSAL_CEPH and rados bench, on a
# one-node cluster (docs/ceph.md, "Benchmark").
bench-ceph: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	perf/bench/ceph.sh $(BUILD)

# Replication (docs/bench.md, "Replication"): a 4 GiB thin disk's baseline
# and 1% incremental against rsync --inplace (installs rsync), then the lag
# under a dsload write load (root, gnuplot; about 5 min).
bench-replication: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsvmdk $(BUILD)/bin/dsload
	perf/bench/replication.sh $(BUILD)
	perf/bench/replication-lag.sh $(BUILD)

# Where dsnfsd's time goes under two loads (perf, syscalls, callgrind).
bench-profile: deps-check $(BUILD)/bin/dsnfsd
	perf/bench/profile.sh $(BUILD)

# VMDK provisioning and clones (docs/dsvmdk.md); needs ~14 GiB in /var/tmp.
bench-vmdk: deps-check $(BUILD)/bin/dsvmdk
	perf/vmdk/bench.sh $(BUILD)/bin/dsvmdk

# 1,024 flows, 100,000 files listed by READDIRPLUS, a 2 TiB VMDK: what
# dsnfsd holds at scale, readdir beside nfs-ganesha (docs/scale.md; root,
# about 5 min).
bench-scale: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload $(BUILD)/bin/dsvmdk
	perf/scale/scale.sh $(BUILD)

# A well-behaved client alone and beside 1,000 idle connections, clients
# that never read their replies and 10,000 connects (ABUSE_SECONDS).
abuse: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	perf/abuse/abuse.sh $(BUILD)/bin

# 64 flows of verified mixed traffic for 30 minutes (SOAK_SECONDS).
soak: deps-check $(BUILD)/bin/dsnfsd $(BUILD)/bin/dsload
	perf/soak/soak.sh $(BUILD)/bin

# dsnfs_VERSION_amd64.deb with Debian's tooling (debian/), built from a copy
# of the tracked files in build/deb/src so nothing lands beside the
# repository; -nc keeps that tree's objects between runs.  lintian last.
deb: deps-check
	@v=$$(dpkg-parsechangelog -l debian/changelog -S Version); \
	[ "$$v" = "$(VERSION)" ] || { \
		echo "deb: debian/changelog says $$v, VERSION $(VERSION)" >&2; exit 1; }
	# A fresh copy: files a commit removed or moved must not linger
	# there and be built again (the wildcards take every .c).
	rm -rf build/deb/src && mkdir -p build/deb/src
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C build/deb/src
	cd build/deb/src && dpkg-buildpackage -b -nc -us -uc --no-sign -jauto >../build.log 2>&1 \
		|| { tail -30 ../build.log; exit 1; }
	lintian --fail-on error build/deb/dsnfs_$(VERSION)_amd64.deb
	@echo "deb: build/deb/dsnfs_$(VERSION)_amd64.deb"

# One style, the formatter's (.clang-format): version 16 inserts braces.
CLANG_FORMAT ?= clang-format-16
format: deps-check
	$(CLANG_FORMAT) -i $$(git ls-files '*.c' '*.h')

format-check: deps-check
	$(CLANG_FORMAT) --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
