#!/usr/bin/env bash
# Installs Debian's headless Chromium and Firefox ESR when missing, for the teaching page's browser test
# (apps/web/test/browsers.test.ts). Both run WebGPU on a software adapter: Chromium on its bundled SwiftShader,
# Firefox on lavapipe. Needs root and apt.
set -euo pipefail
have() { [ -x "$1" ]; }
chromium_ok=false firefox_ok=false
if have /usr/lib/chromium/chromium-headless-shell || have /usr/lib/chromium/chromium; then chromium_ok=true; fi
if have /usr/lib/firefox-esr/firefox-esr; then firefox_ok=true; fi
if $chromium_ok && $firefox_ok; then echo "browsers already installed"; exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get: install Chromium and Firefox ESR by hand to run the browser test" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
packages=()
if ! $chromium_ok; then
  # The headless shell is smaller and starts faster; the full browser works the same where it is missing.
  if apt-cache show chromium-headless-shell >/dev/null 2>&1; then packages+=(chromium-headless-shell); else packages+=(chromium); fi
fi
$firefox_ok || packages+=(firefox-esr)
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "installed: ${packages[*]}"
