# micloop — build, test, benchmark and demo on Debian 12.
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)
PREFIX ?= /usr/local
DEBIAN_PACKAGES := libasound2-dev libfftw3-dev libsndfile1-dev pkg-config \
	pulseaudio pulseaudio-utils libasound2-plugins alsa-utils sox libsox-fmt-all espeak-ng \
	multimon-ng libspandsp-dev gcc python3 python3-numpy hyperfine time
RELEASE_BIN := .build/release/micloop

.PHONY: setup build debug test unit-test talk-eval talkoff-eval bench demo format install clean

## setup: install the Debian packages micloop builds, tests and benchmarks with
setup:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@python3 -c 'import numpy' 2>/dev/null || python3 -m pip install -q numpy

## build: the optimised micloop binary in .build/release/micloop
build: setup
	$(SWIFT) build -c release --static-swift-stdlib

debug: setup
	$(SWIFT) build

## test: unit, end-to-end and live tests, then the talk-detection and talk-off evaluations
test: build unit-test talk-eval talkoff-eval

unit-test: setup
	$(SWIFT) build
	MICLOOP_BIN=$(CURDIR)/$(RELEASE_BIN) $(SWIFT) test

## talk-eval: talk detection on synthetic speech in noise; fails below the targets
talk-eval: build
	python3 Scripts/talk_eval.py --micloop $(RELEASE_BIN) --check

## talkoff-eval: ten minutes of speech must decode as no tone in any plan
talkoff-eval: build
	python3 Scripts/talkoff_eval.py --micloop $(RELEASE_BIN) --check

## demo: micloop loopback --meter live on virtual devices (no sound card needed)
demo: build
	bash Scripts/demo.sh

## bench: side-by-side speed against sox, multimon-ng, spandsp and alsaloop
bench: build
	bash Bench/run.sh

format:
	$(SWIFT) format -i -r Sources Tests Package.swift

install: build
	install -D -m 755 $(RELEASE_BIN) $(DESTDIR)$(PREFIX)/bin/micloop

clean:
	rm -rf .build
