#!/usr/bin/env bash
# Builds the location parsers' libFuzzer targets (media/location/fuzz/*_fuzzer.cc) with clang,
# ASan and UBSan straight from the sources (no bazel: its toolchain is gcc; the sources are those
# media/sources.bzl lists), runs each for a while and prints a table; exits 1 if any target
# crashed or broke an invariant.
#
# Usage: tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s; all targets)
#   TARGET: jpeg png webp heif mp4 xmp
#   FUZZ_OUT   build and work dir (default /tmp/scopedfs-fuzz; $TEST_TMPDIR/fuzz under bazel test)
#   FUZZ_JOBS  targets run at once (default 2)
# Every run passes -timeout=5 and -rss_limit_mb=512: a slow or memory-hungry input is a finding.
# Each target's corpus grows in $FUZZ_OUT/corpus/<target>, seeded from
# media/location/fuzz/corpus/<target>, the media samples (tests/media, or made with
# tests/media/make_samples.sh) and tiny hand-made inputs. Crash inputs land in $FUZZ_OUT/crashes/<target>/, logs in $FUZZ_OUT/logs/.
# To refresh a checked-in corpus: $FUZZ_OUT/bin/<t>_fuzzer -merge=1 NEW_DIR $FUZZ_OUT/corpus/<t>
set -euo pipefail

SECONDS_PER_TARGET=${1:-60}
shift || true
ALL_TARGETS=(jpeg png webp heif mp4 xmp unparsed)
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then TARGETS=("${ALL_TARGETS[@]}"); fi
for t in "${TARGETS[@]}"; do
  if [[ " ${ALL_TARGETS[*]} " != *" $t "* ]]; then
    echo "fuzz: unknown target $t (${ALL_TARGETS[*]})" >&2
    exit 2
  fi
done
if [[ ! $SECONDS_PER_TARGET =~ ^[0-9]+$ ]]; then
  echo "fuzz: SECONDS_PER_TARGET must be a number" >&2
  exit 2
fi

# Under bazel test the sources are the runfiles the test lists as data; otherwise the checkout.
if [[ -n ${TEST_SRCDIR:-} ]]; then
  ROOT=$TEST_SRCDIR/${TEST_WORKSPACE:-scopedfs}
  DEFAULT_OUT=$TEST_TMPDIR/fuzz
else
  ROOT=$(cd "$(dirname "$0")/.." && pwd)
  DEFAULT_OUT=/tmp/scopedfs-fuzz
fi
OUT=${FUZZ_OUT:-$DEFAULT_OUT}
JOBS=${FUZZ_JOBS:-2}
# Per-input limits; a parser must stay far below both (its own caps are 16 MiB read, 8 MiB kept).
FUZZ_TIMEOUT=5
FUZZ_RSS_MB=512
mkdir -p "$OUT"/{gen,obj,bin,corpus,seeds,crashes,logs}

for tool in clang++ protoc pkg-config; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz: $tool is missing (run tools/setup.sh)" >&2
    exit 1
  fi
done

# --- build -----------------------------------------------------------------------------------
# The parser sources are the lists in media/sources.bzl, the same ones media/BUILD and
# media/location/BUILD build their libraries from, so they are written once. bzl_list prints one
# list (one quoted name per line, package-relative) with the package's directory in front.
SOURCES_BZL=$ROOT/media/sources.bzl
bzl_list() {  # bzl_list <NAME> <dir>
  sed -n "/^$1 = \[\$/,/^]\$/s|^ *\"\([^\"]*\)\",\$|$2/\1|p" "$SOURCES_BZL"
}
mapfile -t PARSER_SRCS < <(bzl_list MEDIA_SRCS media; bzl_list LOCATION_SRCS media/location)
if ((${#PARSER_SRCS[@]} < 2)); then
  echo "fuzz: no sources listed in $SOURCES_BZL (MEDIA_SRCS, LOCATION_SRCS)" >&2
  exit 1
fi
HEADERS=("$ROOT"/media/*.h "$ROOT"/media/location/*.h "$ROOT"/media/location/fuzz/*.h
  "$ROOT"/proto/policy.proto "$SOURCES_BZL")
PKGS="protobuf absl_strings absl_raw_hash_set absl_hash"
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
CXX=(clang++ -std=c++17 -g -O1 "${SAN[@]}" -I"$ROOT" -I"$OUT/gen" $(pkg-config --cflags $PKGS))

# Whether $1 must be rebuilt from the sources after it.
stale() {
  local target=$1; shift
  [[ -f $target ]] || return 0
  local f
  for f in "$@" "${HEADERS[@]}"; do [[ $f -nt $target ]] && return 0; done
  return 1
}

if stale "$OUT/gen/proto/policy.pb.cc"; then
  protoc --proto_path="$ROOT" --cpp_out="$OUT/gen" "$ROOT/proto/policy.proto"
fi

# Each compile is a background job, at most $JOBS at once: the machine has few cores to share.
compile() {  # compile <src> <obj> <flags...>
  local src=$1 obj=$2; shift 2
  if stale "$obj" "$src"; then
    echo "fuzz: compiling ${src#"$ROOT"/}"
    rm -f "$obj"
    "${CXX[@]}" "$@" -c "$src" -o "$obj.tmp" && mv "$obj.tmp" "$obj"
  fi
}
wait_for_slot() {
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
}
# Generated code is neither ours to keep warning-free nor worth coverage feedback.
wait_for_slot; compile "$OUT/gen/proto/policy.pb.cc" "$OUT/obj/policy.pb.o" -w &
# Objects are named by the source's path (media/location/exif_gps.cc -> media_location_exif_gps).
obj_name() { local n=${1%.cc}; echo "${n//\//_}"; }
for s in "${PARSER_SRCS[@]}"; do
  wait_for_slot
  compile "$ROOT/$s" "$OUT/obj/$(obj_name "$s").o" -fsanitize=fuzzer-no-link -Wall -Wextra &
done
for t in "${TARGETS[@]}"; do
  wait_for_slot
  compile "$ROOT/media/location/fuzz/${t}_fuzzer.cc" "$OUT/obj/${t}_fuzzer.o" \
    -fsanitize=fuzzer-no-link -Wall -Wextra -Werror &
done
wait
OBJS=("$OUT/obj/policy.pb.o")
FUZZER_OBJS=()
for s in "${PARSER_SRCS[@]}"; do OBJS+=("$OUT/obj/$(obj_name "$s").o"); done
for t in "${TARGETS[@]}"; do FUZZER_OBJS+=("$OUT/obj/${t}_fuzzer.o"); done
for o in "${OBJS[@]}" "${FUZZER_OBJS[@]}"; do
  [[ -f $o && ! -f $o.tmp ]] || { echo "fuzz: build failed" >&2; exit 1; }
done
for t in "${TARGETS[@]}"; do
  bin=$OUT/bin/${t}_fuzzer
  if [[ ! -f $bin ]] || [[ -n $(find "${OBJS[@]}" "$OUT/obj/${t}_fuzzer.o" -newer "$bin") ]]; then
    "${CXX[@]}" -fsanitize=fuzzer "$OUT/obj/${t}_fuzzer.o" "${OBJS[@]}" \
      $(pkg-config --libs $PKGS) -o "$bin"
  fi
done

# --- seeds -----------------------------------------------------------------------------------
SAMPLES=$ROOT/tests/media
if [[ ! -f $SAMPLES/gps.jpg ]]; then
  SAMPLES=$OUT/samples
  if [[ ! -f $SAMPLES/keys.mov ]]; then
    echo "fuzz: making media samples in $SAMPLES"
    bash "$ROOT/tests/media/make_samples.sh" "$SAMPLES" ||
      echo "fuzz: no media samples (see above); hand-made seeds only" >&2
  fi
fi

# Binary building blocks for the hand-made seeds; each writes to stdout.
be16() { printf "$(printf '\\x%02x\\x%02x' $(($1 >> 8 & 255)) $(($1 & 255)))"; }
be32() { be16 $(($1 >> 16)); be16 $(($1 & 65535)); }
le32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
  $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"; }
# Runs a command into a temporary file, then prints <header command> <size> and the bytes.
framed() {  # framed <header-fn> <extra> <cmd...>
  local header=$1 extra=$2 tmp
  tmp=$(mktemp)
  "${@:3}" >"$tmp"
  "$header" "$(stat -c %s "$tmp")" "$extra"
  cat "$tmp"
  rm -f "$tmp"
}
box_header() { be32 $((8 + $1)); printf '%s' "$2"; }
box() { framed box_header "$@"; }                       # ISO-BMFF box: box TYPE cmd...
seg_header() { printf "\\xff\\x$2"; be16 $((2 + $1)); }
segment() { framed seg_header "$@"; }                   # JPEG segment: segment e1 cmd...
chunk() { be32 "$(wc -c <"$2")"; printf '%s' "$1"; cat "$2"; printf '\0\0\0\0'; }  # PNG, CRC 0
bytes() { printf "$1"; }
text() { printf '%s' "$1"; }
cat_all() { cat "$@"; }

# A big-endian TIFF: IFD0 -> GPS IFD with GPSLatitudeRef "N" and GPSLatitude 37/1 46/1 2964/100.
TIFF='MM\x00*\x00\x00\x00\x08'                                            # header, IFD0 at 8
TIFF+='\x00\x01\x88\x25\x00\x04\x00\x00\x00\x01\x00\x00\x00\x1a\x00\x00\x00\x00'  # GPSInfo -> 26
TIFF+='\x00\x02\x00\x01\x00\x02\x00\x00\x00\x02N\x00\x00\x00'                 # GPS IFD: Ref "N"
TIFF+='\x00\x02\x00\x05\x00\x00\x00\x03\x00\x00\x00\x38\x00\x00\x00\x00'          # Latitude -> 56
TIFF+='\x00\x00\x00\x25\x00\x00\x00\x01\x00\x00\x00\x2e\x00\x00\x00\x01'          # 37/1 46/1
TIFF+='\x00\x00\x0b\x94\x00\x00\x00\x64'                                    # 2964/100
XMP="<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?><x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF"
XMP+=" xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description rdf:about=''"
XMP+=" xmlns:exif='http://ns.adobe.com/exif/1.0/' exif:GPSLatitude='37,46.494N'>"
XMP+="<exif:GPSLongitude>122,25.164W</exif:GPSLongitude></rdf:Description></rdf:RDF></x:xmpmeta>"
XMP+="<?xpacket end='w'?>"
XYZ='+37.7749-122.4194/'

# Tiny inputs that reach each parser's location code at once, before mutation finds its way.
hand_seeds() {  # hand_seeds <target> <dir>
  local d=$2 tmp
  tmp=$(mktemp -d)
  case $1 in
    jpeg)
      { bytes '\xff\xd8'; segment e1 bytes "Exif\x00\x00$TIFF"; bytes '\xff\xd9'; } \
        >"$d/hand-exif.jpg"
      { bytes '\xff\xd8'; segment e1 eval "bytes 'http://ns.adobe.com/xap/1.0/\x00'; text \"\$XMP\""
        bytes '\xff\xd9'; } >"$d/hand-xmp.jpg"
      bytes '\xff\xd8\xff\xd9' >"$d/hand-empty.jpg" ;;
    png)  # CRCs are zero: a location finder has no business checking them
      bytes '\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00' >"$tmp/ihdr"
      bytes "$TIFF" >"$tmp/exif"
      { bytes 'XML:com.adobe.xmp\x00\x00\x00\x00\x00'; text "$XMP"; } >"$tmp/itxt"
      : >"$tmp/iend"
      { bytes '\x89PNG\r\n\x1a\n'; chunk IHDR "$tmp/ihdr"; chunk eXIf "$tmp/exif"
        chunk iTXt "$tmp/itxt"; chunk IEND "$tmp/iend"; } >"$d/hand.png" ;;
    webp)
      { bytes 'VP8X'; le32 10; bytes '\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00'
        bytes 'EXIF'; le32 80; bytes "$TIFF"; } >"$tmp/body"
      { bytes 'RIFF'; le32 $((4 + $(wc -c <"$tmp/body"))); bytes 'WEBP'; cat "$tmp/body"; } \
        >"$d/hand-exif.webp" ;;
    heif)
      { box ftyp bytes 'heic\x00\x00\x00\x00mif1heic'; box meta bytes '\x00\x00\x00\x00'
      } >"$d/hand-empty-meta.heic" ;;
    mp4)
      { box ftyp bytes 'isom\x00\x00\x02\x00isom'
        box moov box udta box $'\xa9xyz' eval "be16 ${#XYZ}; bytes '\x15\xc7'; text \"\$XYZ\""
      } >"$d/hand-xyz.mp4"
      { box ftyp bytes '3gp4\x00\x00\x02\x003gp4'
        # version/flags, language, name "", role, longitude, latitude, altitude (16.16), body, notes
        box moov box udta box loci bytes '\x00\x00\x00\x00\x15\xc7\x00\x00\xff\x85\x94\xa2'\
'\x00\x25\xc6\x60\x00\x00\x00\x00earth\x00\x00'
      } >"$d/hand-loci.3gp" ;;
    unparsed)
      { bytes 'ID3\x03\x00\x00\x00\x00\x00\x20PRIV\x00\x00\x00\x16\x00\x00XMP\x00'
        text '<x:xmpmeta>GPS</x:xmpmeta>'; bytes '\xff\xfb\x90\x64\x00\x00'
      } >"$d/hand-id3.mp3"
      { bytes 'RIFF\x30\x00\x00\x00WAVEfmt \x04\x00\x00\x00\x01\x00\x01\x00'
        bytes '_PMX\x0a\x00\x00\x00<?xpacketdata\x04\x00\x00\x00\x00\x00\x00\x00'
      } >"$d/hand-pmx.wav" ;;
    xmp)
      text "$XMP" >"$d/hand.xmp"
      text '<a><b:GPSx c="1"/><!-- <d:GPSy> --><![CDATA[<e:GPSz>]]></a>' >"$d/hand-tricky.xmp" ;;
  esac
  rm -rf "$tmp"
}

# Media samples of the target's format (for xmp: the XMP packets exiftool extracts from them).
sample_seeds() {  # sample_seeds <target> <dir>
  local t=$1 d=$2 f globs=()
  case $t in
    jpeg) globs=(jpg) ;; png) globs=(png) ;; webp) globs=(webp) ;; heif) globs=(heic avif) ;;
    mp4) globs=(mp4 mov 3gp m4a) ;; xmp) globs=(jpg png webp heic avif) ;;
  esac
  for ext in "${globs[@]}"; do
    for f in "$SAMPLES"/*."$ext"; do
      [[ -f $f ]] || continue
      if [[ $t == xmp ]]; then
        command -v exiftool >/dev/null &&
          exiftool -q -q -xmp -b "$f" >"$d/$(basename "$f").xmp" || true
        [[ -s $d/$(basename "$f").xmp ]] || rm -f "$d/$(basename "$f").xmp"
      else
        cp "$f" "$d/" && chmod u+w "$d/$(basename "$f")"
      fi
    done
  done
}

# --- run -------------------------------------------------------------------------------------
if command -v llvm-symbolizer-14 >/dev/null; then
  export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
fi
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1

run_target() {  # run_target <target>: one libFuzzer run, output in logs/<target>.log
  local t=$1 dict=$ROOT/media/location/fuzz/dicts/$1.dict extra=()
  [[ $t == heif || $t == mp4 ]] && dict=$ROOT/media/location/fuzz/dicts/isobmff.dict
  [[ -f $dict ]] && extra+=(-dict="$dict")
  local seeds=$OUT/seeds/$t
  rm -rf "$seeds" && mkdir -p "$seeds" "$OUT/corpus/$t" "$OUT/crashes/$t"
  hand_seeds "$t" "$seeds"
  sample_seeds "$t" "$seeds"
  local dirs=("$OUT/corpus/$t" "$seeds")
  [[ -d $ROOT/media/location/fuzz/corpus/$t ]] && dirs+=("$ROOT/media/location/fuzz/corpus/$t")
  # -timeout and -rss_limit_mb (which also caps single mallocs): an input that takes seconds or
  # hundreds of megabytes is a denial of service, reported like a crash. Every run has them, the
  # CI smoke run included, since this is the only place the fuzzers are started.
  local rc=0
  "$OUT/bin/${t}_fuzzer" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
    -max_len=32768 -timeout="$FUZZ_TIMEOUT" -rss_limit_mb="$FUZZ_RSS_MB" \
    -artifact_prefix="$OUT/crashes/$t/" \
    "${extra[@]}" "${dirs[@]}" >"$OUT/logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$OUT/logs/$t.rc"
}

echo "fuzz: running ${TARGETS[*]} for ${SECONDS_PER_TARGET}s each, $JOBS at a time, in $OUT"
for t in "${TARGETS[@]}"; do
  rm -f "$OUT/logs/$t.rc"
  wait_for_slot
  run_target "$t" &
done
wait
declare -A rc
for t in "${TARGETS[@]}"; do rc[$t]=$(cat "$OUT/logs/$t.rc" 2>/dev/null || echo 1); done

# --- report ----------------------------------------------------------------------------------
stat_of() { sed -n "s/^stat::$2: *//p" "$OUT/logs/$1.log" | tail -1; }
crashed=0
printf '%-6s %6s %10s %8s %6s %7s %7s  %s\n' target secs execs exec/s cov ft corpus result
for t in "${TARGETS[@]}"; do
  log=$OUT/logs/$t.log
  # The last status line ("#N ... cov: C ft: F corp: U/S ...") has the final coverage.
  status=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$status")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$status")
  corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<<"$status")
  result=ok
  if [[ ${rc[$t]} -ne 0 ]]; then
    crashed=1
    result="CRASH (exit ${rc[$t]})"
  fi
  printf '%-6s %6s %10s %8s %6s %7s %7s  %s\n' "$t" "$SECONDS_PER_TARGET" \
    "$(stat_of "$t" number_of_executed_units)" "$(stat_of "$t" average_exec_per_sec)" \
    "${cov:--}" "${ft:--}" "${corp:--}" "$result"
done
for t in "${TARGETS[@]}"; do
  [[ ${rc[$t]} -eq 0 ]] && continue
  log=$OUT/logs/$t.log
  echo
  echo "== $t: log $log"
  grep -m1 -E 'INVARIANT VIOLATED|ERROR: (Address|Leak)Sanitizer|ERROR: libFuzzer|runtime error' \
    "$log" || true
  grep -E '^ *#[0-9]+ 0x' "$log" | head -15 || true
  sed -n 's/.*Test unit written to \(.*\)/input: \1/p' "$log"
  # Each input is kept where it outlives the run: under bazel test the work directory goes with
  # the test, so it is copied into the test's undeclared outputs, and printed (base64; inputs are
  # at most -max_len bytes) so that a CI log alone is enough to replay it:
  #   base64 -d > media/location/testdata/fuzz_crashes/<target>-N (fuzz_crashes_test replays it).
  for a in "$OUT/crashes/$t"/*; do
    [[ -f $a ]] || continue
    echo "artifact: $a ($(stat -c %s "$a") bytes)"
    if [[ -n ${TEST_UNDECLARED_OUTPUTS_DIR:-} ]]; then
      mkdir -p "$TEST_UNDECLARED_OUTPUTS_DIR/fuzz_crashes/$t"
      cp "$a" "$TEST_UNDECLARED_OUTPUTS_DIR/fuzz_crashes/$t/" &&
        echo "kept: $TEST_UNDECLARED_OUTPUTS_DIR/fuzz_crashes/$t/$(basename "$a")"
    fi
    echo "base64 of $(basename "$a"):"
    base64 -w 100 "$a"
  done
done
exit "$crashed"
