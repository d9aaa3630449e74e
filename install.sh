#!/bin/sh
# Installs sticky's release binary for this machine, without Rust:
#
#   curl -fsSL https://github.com/sticky-cli/sticky/releases/latest/download/install.sh | sh
#
# It picks the asset for `uname -s` and `uname -m` (Linux x86_64 and aarch64: static musl
# binaries; macOS x86_64 and arm64), downloads it and its SHA-256 file from the release,
# refuses a download whose SHA-256 differs (nothing is installed then), and puts `sticky` into
# ~/.local/bin, or $STICKY_INSTALL_DIR. An existing sticky there is replaced in one rename, so
# a sticky running meanwhile never sees half a file.
#
# Environment:
#   STICKY_INSTALL_DIR   where to install (default: ~/.local/bin)
#   STICKY_VERSION       a release tag such as v0.1.0 (default: the latest release)
#   STICKY_RELEASE_URL   where the assets are, instead of the GitHub release (a mirror, a test)
#
# POSIX sh only; needs curl or wget, tar, and sha256sum, shasum or openssl.
set -eu

repository=https://github.com/sticky-cli/sticky

fail() {
  printf 'sticky install: %s\n' "$*" >&2
  exit 1
}

# The release target whose binary runs here.
target() {
  os=$(uname -s)
  machine=$(uname -m)
  case "$os/$machine" in
    Linux/x86_64 | Linux/amd64) echo x86_64-unknown-linux-musl ;;
    Linux/aarch64 | Linux/arm64) echo aarch64-unknown-linux-musl ;;
    Darwin/arm64 | Darwin/aarch64) echo aarch64-apple-darwin ;;
    Darwin/x86_64)
      # A shell under Rosetta on Apple silicon says x86_64; the native binary is the better one.
      if [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
        echo aarch64-apple-darwin
      else
        echo x86_64-apple-darwin
      fi
      ;;
    *)
      fail "no release binary for $os $machine (there are for Linux x86_64 and aarch64, and macOS x86_64 and arm64); with Rust, build it instead: cargo install --locked --git $repository sticky"
      ;;
  esac
}

# download URL FILE: over HTTPS only, redirects included, unless STICKY_RELEASE_URL names
# another scheme on purpose.
download() {
  case "$1" in
    https://*) curl_proto='=https' wget_https=--https-only ;;
    *) curl_proto='=http,https' wget_https= ;;
  esac
  if command -v curl >/dev/null 2>&1; then
    curl --proto "$curl_proto" --proto-redir "$curl_proto" -fsSL "$1" -o "$2" \
      || fail "could not download $1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q $wget_https -O "$2" "$1" || fail "could not download $1"
  else
    fail "neither curl nor wget is installed: install one, or download $1 by hand"
  fi
}

# The SHA-256 of FILE, in lowercase hex.
sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    fail "no sha256sum, shasum or openssl to check the download with"
  fi
}

main() {
  target=$(target)
  if [ -n "${STICKY_RELEASE_URL:-}" ]; then
    base=${STICKY_RELEASE_URL%/}
  elif [ -n "${STICKY_VERSION:-}" ]; then
    base=$repository/releases/download/$STICKY_VERSION
  else
    base=$repository/releases/latest/download
  fi
  dir=${STICKY_INSTALL_DIR:-${HOME:?HOME is not set: set STICKY_INSTALL_DIR}/.local/bin}
  asset=sticky-$target.tar.gz

  scratch=$(mktemp -d 2>/dev/null || mktemp -d -t sticky-install)
  trap 'rm -rf "$scratch"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  download "$base/$asset.sha256" "$scratch/$asset.sha256"
  download "$base/$asset" "$scratch/$asset"
  expected=$(cut -d ' ' -f 1 <"$scratch/$asset.sha256" | tr 'A-F' 'a-f')
  actual=$(sha256 "$scratch/$asset")
  case "$expected" in
    *[!0-9a-f]* | "") fail "$base/$asset.sha256 holds no SHA-256; nothing was installed" ;;
  esac
  [ "$actual" = "$expected" ] \
    || fail "$asset has SHA-256 $actual, but the release says $expected: the download was damaged or altered; nothing was installed"

  mkdir -p "$scratch/unpacked"
  tar -xzf "$scratch/$asset" -C "$scratch/unpacked" \
    || fail "could not unpack $asset; nothing was installed"
  [ -f "$scratch/unpacked/sticky" ] || fail "$asset holds no sticky; nothing was installed"
  "$scratch/unpacked/sticky" --version >/dev/null 2>&1 \
    || fail "the downloaded sticky does not run on this machine ($target); nothing was installed"

  mkdir -p "$dir" || fail "could not create $dir (set STICKY_INSTALL_DIR to a directory you can write)"
  # Copied beside its final name first, so the rename below is one step on one file system.
  cp "$scratch/unpacked/sticky" "$dir/.sticky.new.$$" \
    || fail "could not write into $dir (set STICKY_INSTALL_DIR to a directory you can write)"
  chmod 755 "$dir/.sticky.new.$$"
  mv -f "$dir/.sticky.new.$$" "$dir/sticky" || {
    rm -f "$dir/.sticky.new.$$"
    fail "could not replace $dir/sticky"
  }
  printf 'installed %s (%s) into %s\n' "$("$dir/sticky" --version)" "$target" "$dir"

  case ":${PATH:-}:" in
    *":$dir:"*) ;;
    *)
      printf '%s is not on your PATH; add it, in ~/.profile or your shell'"'"'s rc file:\n' "$dir"
      printf '  export PATH="%s:$PATH"\n' "$dir"
      ;;
  esac
}

main "$@"
