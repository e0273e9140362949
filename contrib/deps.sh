# Debian packages Tessera builds, tests and runs with; sourced by test.sh and
# quickstart.sh. Installs only what is missing, with apt-get, without asking.
TESSERA_PACKAGES=(
  build-essential cmake pkg-config
  libprotobuf-c-dev protobuf-c-compiler
  libssl-dev liblmdb-dev
  munge libmunge-dev
  libcmocka-dev libjansson-dev
  zlib1g-dev
  clang libclang-rt-14-dev
  mpich libmpich-dev
  python3
)

tessera_install_deps() {
  local missing=() p
  for p in "${TESSERA_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "Installing: ${missing[*]}"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install ${missing[*]}" >&2; return 1; }
    sudo=(sudo -n)
  fi
  # The package lists of a fresh machine may be empty: refresh them before installing.
  "${sudo[@]}" apt-get update -qq </dev/null
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" </dev/null
}
