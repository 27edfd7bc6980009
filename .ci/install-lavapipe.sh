#!/usr/bin/env bash
# Installs Mesa 25's lavapipe (a software Vulkan GPU) from bookworm-backports when no Vulkan ICD is present.
# Debian 12's own Mesa 22 lavapipe is rejected by Dawn, so the backport is required. Needs root and apt.
set -euo pipefail
installed=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
case "$installed" in
  2[4-9].*|[3-9][0-9].*) echo "lavapipe $installed already installed"; exit 0 ;;
esac
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get: install a Vulkan driver (Mesa >= 24 lavapipe) by hand to run the GPU rungs" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
src=/etc/apt/sources.list.d/${codename}-backports.sources
if [ ! -f "$src" ]; then
  # Reuse the mirror the machine already uses for its main suite.
  uri=$(grep -h -o -E '^URIs: *\S+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}')
  [ -n "$uri" ] || uri=$(grep -h -o -E '^deb +\S+' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
  $sudo tee "$src" >/dev/null <<SRC
Types: deb
URIs: ${uri}
Suites: ${codename}-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -t "${codename}-backports" mesa-vulkan-drivers >/dev/null
echo "installed: $(ls /usr/share/vulkan/icd.d/)"
