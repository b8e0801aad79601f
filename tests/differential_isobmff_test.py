#!/usr/bin/env python3
# Differential test of the ISO-BMFF location walk against exiftool (and ffprobe): builds many
# variants of where and how MP4/MOV/3GP/M4A/HEIF files carry location, and for every variant in
# which a reader finds the coordinates, the copy `scopedfsctl scan --redacted_out` writes must
# give that reader none. Malformed scans are judged the same way, on the fallback-filled copy the
# daemon serves under REDACT_ALL (under DENY such a file is not served at all).
# Variants no reader sees into prove nothing ("inert"): boxes in placements readers do not walk
# (a third of them today). More than 40% inert, or a family of boxes readers do read with no
# variant a reader finds, fails: the generator would have stopped testing what it names.
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

CTL = "tools/scopedfsctl"
# Variant families (a name's first dash-separated word) whose location exiftool or ffprobe reads
# in at least one placement; the others (udta-exif-atom, uuid-tiff) are there for the walk alone.
READ_FAMILIES = ("itunes", "keys", "loci", "xyz", "xmpbox", "uuidxmp", "item", "sample")
MAX_INERT_FRACTION = 0.4
MEDIA = "tests/media"
# How the coordinates (37.7749, -122.4194) print in exiftool -n and ffprobe output, in decimal,
# degrees or ISO 6709.
COORDS = re.compile(r"37\.77|122\.41|37 deg 46|122 deg 25|\+37\.7|-122\.4")
LAT, LON = 37.7749, -122.4194
ISO6709 = b"+37.7749-122.4194/"


# ---- box building ------------------------------------------------------------------------------

def box(kind, payload, large=False):
    if large:  # 64-bit size
        return struct.pack(">I", 1) + kind + struct.pack(">Q", 16 + len(payload)) + payload
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def full(kind, version, payload, large=False):
    return box(kind, bytes([version, 0, 0, 0]) + payload, large)


def ftyp(major, *compatible):
    return box(b"ftyp", major + b"\0\0\0\0" + major + b"".join(compatible))


def hdlr(handler):
    return full(b"hdlr", 0, b"\0" * 4 + handler + b"\0" * 12 + b"\0")


def mvhd():
    body = struct.pack(">IIII", 0, 0, 1000, 1000) + struct.pack(">IH", 0x10000, 0x100)
    body += b"\0" * 10 + struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    body += b"\0" * 24 + struct.pack(">I", 2)
    return full(b"mvhd", 0, body)


def trak(handler=b"vide", extra=b""):
    tkhd = full(b"tkhd", 0, b"\0" * 80)
    mdhd = full(b"mdhd", 0, struct.pack(">IIIIHH", 0, 0, 1000, 0, 0x55C4, 0))
    return box(b"trak", tkhd + box(b"mdia", mdhd + hdlr(handler)) + extra)


def mdat(n=64):
    return box(b"mdat", b"\x55" * n)


def xyz_text():
    return box(b"\xa9xyz", struct.pack(">HH", len(ISO6709), 0x15C7) + ISO6709)


def loci():
    fixed = lambda v: struct.pack(">i", int(round(v * 65536)))
    return full(b"loci", 0, struct.pack(">H", 0x15C7) + b"Home\0" + b"\0" + fixed(LON) +
                fixed(LAT) + fixed(10.0) + b"earth\0" + b"\0")


def data(value):
    return box(b"data", struct.pack(">II", 1, 0) + value)


def itunes_meta():
    return full(b"meta", 0, hdlr(b"mdir") + box(b"ilst", box(b"\xa9xyz", data(ISO6709))))


def keys_meta():
    name = b"com.apple.quicktime.location.ISO6709"
    keys = full(b"keys", 0, struct.pack(">I", 1) + struct.pack(">I", 8 + len(name)) + b"mdta" +
                name)
    return box(b"meta", hdlr(b"mdta") + keys + box(b"ilst", box(struct.pack(">I", 1),
                                                                data(ISO6709))))


def xmp_packet():
    return (b"<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>"
            b"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF "
            b"xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description "
            b"rdf:about='' xmlns:exif='http://ns.adobe.com/exif/1.0/' "
            b"exif:GPSLatitude='37,46.494N' exif:GPSLongitude='122,25.164W'/></rdf:RDF>"
            b"</x:xmpmeta><?xpacket end='w'?>")


XMP_UUID = bytes.fromhex("BE7ACFCB97A942E89C71999491E3AFAC")


def tiff_gps():
    def entry(tag, typ, count, value):
        return struct.pack(">HHII", tag, typ, count, value)
    t = b"MM\0*" + struct.pack(">I", 8)
    t += struct.pack(">H", 1) + entry(0x8825, 4, 1, 26) + b"\0" * 4          # IFD0 [8, 26)
    t += struct.pack(">H", 4) + entry(1, 2, 2, 0x4E000000) + entry(2, 5, 3, 80)
    t += entry(3, 2, 2, 0x57000000) + entry(4, 5, 3, 104) + b"\0" * 4         # GPS [26, 80)
    for v in (37, 1, 46, 1, 2964, 100, 122, 1, 25, 1, 984, 100):
        t += struct.pack(">I", v)
    return t


def exif_item():
    return struct.pack(">I", 6) + b"Exif\0\0" + tiff_gps()


def heif_meta(item_offset, item, kind):
    if kind == "exif":
        infe = full(b"infe", 2, struct.pack(">HH", 2, 0) + b"Exif" + b"\0")
    else:
        infe = full(b"infe", 2, struct.pack(">HH", 2, 0) + b"mime" + b"\0application/rdf+xml\0")
    pict = full(b"infe", 2, struct.pack(">HH", 1, 0) + b"hvc1" + b"\0")
    iinf = full(b"iinf", 0, struct.pack(">H", 2) + pict + infe)
    iloc = full(b"iloc", 1, bytes([0x44, 0]) + struct.pack(">H", 1) +
                struct.pack(">HHHH", 2, 0, 0, 1) + struct.pack(">II", item_offset, len(item)))
    return full(b"meta", 0, hdlr(b"pict") + full(b"pitm", 0, struct.pack(">H", 1)) + iinf + iloc)


def heif_file(brand_box, kind, tail=b""):
    item = exif_item() if kind == "exif" else xmp_packet()
    probe = heif_meta(0, item, kind)
    at = len(brand_box) + len(probe) + 8
    return brand_box + heif_meta(at, item, kind) + box(b"mdat", item) + tail


# ---- variants ----------------------------------------------------------------------------------

def variants():
    forms = {
        "xyz": xyz_text,
        "loci": loci,
        "itunes": itunes_meta,
        "keys": keys_meta,
        "xmpbox": lambda: box(b"XMP_", xmp_packet()),
        "uuidxmp": lambda: box(b"uuid", XMP_UUID + xmp_packet()),
    }
    # Where the form goes: a function of the form's box giving the file body after ftyp.
    placements = {
        "moov.udta": lambda b, L: box(b"moov", mvhd() + trak() + box(b"udta", b, L), L),
        "moov.trak.udta": lambda b, L: box(b"moov", mvhd() + trak(extra=box(b"udta", b, L)), L),
        "moov": lambda b, L: box(b"moov", mvhd() + trak() + b, L),
        "moov.trak": lambda b, L: box(b"moov", mvhd() + trak(extra=b), L),
        "root.udta": lambda b, L: box(b"moov", mvhd() + trak(), L) + box(b"udta", b, L),
        "root": lambda b, L: box(b"moov", mvhd() + trak(), L) + b,
        "moov.udta.meta": lambda b, L: box(b"moov", mvhd() + trak() + box(
            b"udta", full(b"meta", 0, hdlr(b"mdir") + b), L), L),
    }
    brands = {
        "mp4": ftyp(b"isom", b"iso2", b"mp41"),
        "mov": ftyp(b"qt  "),
        "3gp": ftyp(b"3gp4", b"3gp4"),
        "m4a": ftyp(b"M4A ", b"mp42"),
        "heic": ftyp(b"heic", b"mif1"),
    }
    out = []
    for fname, form in forms.items():
        for pname, place in placements.items():
            for ext, brand in brands.items():
                for large in (False, True):
                    body = place(form(), large)
                    for zero_mdat in (False, True):
                        if zero_mdat:  # the last box runs to the end of the file (size 0)
                            tail = struct.pack(">I", 0) + b"mdat" + b"\x55" * 40
                        else:
                            tail = mdat()
                        name = "%s-%s-%s%s%s.%s" % (fname, pname, ext, "-64" if large else "",
                                                    "-z" if zero_mdat else "", ext)
                        out.append((name, brand + body + tail))
    # HEIF items (Exif and XMP) under image and video brands, with a moov carrying ©xyz too.
    for kind in ("exif", "xmp"):
        for ext, brand in (("heic", ftyp(b"heic", b"mif1")), ("avif", ftyp(b"avif", b"mif1")),
                           ("mp4", ftyp(b"mp42", b"isom")), ("mov", ftyp(b"qt  "))):
            out.append(("item-%s-%s.%s" % (kind, ext, ext), heif_file(brand, kind)))
            out.append(("item-%s-%s-moovxyz.%s" % (kind, ext, ext),
                        heif_file(brand, kind, box(b"moov", mvhd() + box(b"udta", xyz_text())))))
    # Vendor boxes: Exif TIFF in a user-data atom and in a uuid.
    for ext, brand in (("mp4", ftyp(b"isom")), ("mov", ftyp(b"qt  "))):
        out.append(("udta-exif-atom.%s" % ext, brand + box(b"moov", mvhd() + trak() + box(
            b"udta", box(b"NCDT", b"Exif\0\0" + tiff_gps()))) + mdat()))
        out.append(("uuid-tiff.%s" % ext, brand + box(b"moov", mvhd() + trak()) +
                    box(b"uuid", b"\x42" * 16 + tiff_gps()) + mdat()))
    return out


# ---- readers -----------------------------------------------------------------------------------

def exiftool_hits(files):
    """Per file, the exiftool tags whose values hold the coordinates."""
    hits = {f: [] for f in files}
    if not files:
        return hits
    proc = subprocess.run(["exiftool", "-j", "-n", "-a", "-G1", "-ee", "-api", "LargeFileSupport=1"]
                          + files, capture_output=True, text=True)
    try:
        records = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        records = []
    for rec in records:
        src = rec.get("SourceFile")
        for key, value in rec.items():
            if key == "SourceFile" or key.startswith("System:") or key.startswith("File:"):
                continue
            if COORDS.search(str(value)):
                hits.setdefault(src, []).append("%s=%s" % (key, value))
    return hits


def ffprobe_hits(path):
    proc = subprocess.run(["ffprobe", "-v", "quiet", "-of", "json", "-show_entries",
                           "format_tags:stream_tags", path], capture_output=True, text=True)
    return ["ffprobe:" + m for m in COORDS.findall(proc.stdout)]


def main():
    for tool in ("exiftool", "ffprobe"):
        if shutil.which(tool) is None:
            print("FAIL: %s is not installed (run tools/setup.sh)" % tool)
            return 1
    if not os.path.exists(CTL):
        print("FAIL: %s missing (run under bazel test)" % CTL)
        return 1
    tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    orig_dir, red_dir = os.path.join(tmp, "orig"), os.path.join(tmp, "red")
    os.makedirs(orig_dir)
    os.makedirs(red_dir)
    names = []
    for name, content in variants():
        with open(os.path.join(orig_dir, name), "wb") as f:
            f.write(content)
        names.append(name)
    # Real samples made by ffmpeg and exiftool at build time, as the other oracle test uses.
    for sample in ("loc.mp4", "loc.mov", "loc.3gp", "loc.m4a", "keys.mov", "gps.heic", "gps.avif"):
        path = os.path.join(MEDIA, sample)
        if os.path.exists(path):
            shutil.copyfile(path, os.path.join(orig_dir, "sample-" + sample))
            names.append("sample-" + sample)

    originals = [os.path.join(orig_dir, n) for n in names]
    scan = subprocess.run([CTL, "scan", "--redacted_out=" + red_dir] + originals,
                          capture_output=True, text=True)
    malformed = set()
    current = None
    for line in scan.stdout.splitlines():
        m = re.match(r"^(\S.*): format ", line)
        if m:
            current = os.path.basename(m.group(1))
        elif line.startswith("  malformed: yes") and current:
            malformed.add(current)
    redacted = [os.path.join(red_dir, n) for n in names]
    before = exiftool_hits(originals)
    after = exiftool_hits([r for r in redacted if os.path.exists(r)])

    failures = applicable = 0
    applicable_by_family = {family: 0 for family in READ_FAMILIES}
    for name, orig, red in zip(names, originals, redacted):
        found = before.get(orig, []) + ffprobe_hits(orig)
        if not found:
            print("SKIP  %-40s no reader finds the coordinates in the original" % name)
            continue
        applicable += 1
        family = name.split("-")[0]
        if family in applicable_by_family:
            applicable_by_family[family] += 1
        if not os.path.exists(red):
            print("FAIL  %-40s no redacted copy written" % name)
            failures += 1
            continue
        left = after.get(red, []) + ffprobe_hits(red)
        verdict = "malformed, fallback filled" if name in malformed else "parsed"
        if left:
            failures += 1
            print("FAIL  %-40s (%s) still shows: %s" % (name, verdict, "; ".join(left[:4])))
        else:
            print("PASS  %-40s (%s) original had: %s" % (name, verdict, "; ".join(found[:2])))

    # The check must be able to fail: the first applicable original, judged as if it were its
    # own redacted copy (redaction skipped), has to be caught.
    self_check = False
    for name, orig in zip(names, originals):
        if before.get(orig):
            self_check = bool(exiftool_hits([orig]).get(orig))
            print("self-check: an unredacted %s is %s" % (name, "caught" if self_check else
                                                           "NOT caught"))
            break
    if not self_check:
        failures += 1
    print("differential_isobmff_test: %d variants, %d where a reader finds location, %d "
          "malformed, %d failed" % (len(names), applicable, len(malformed), failures))
    if scan.returncode != 0:
        print("FAIL: scopedfsctl scan exited %d: %s" % (scan.returncode, scan.stderr[-2000:]))
        failures += 1
    inert = len(names) - applicable
    if inert > MAX_INERT_FRACTION * len(names):
        print("FAIL: %d of %d variants are inert (more than %d%%)" %
              (inert, len(names), 100 * MAX_INERT_FRACTION))
        failures += 1
    for family, count in sorted(applicable_by_family.items()):
        if count == 0:
            print("FAIL: no %s variant carries a coordinate a reader finds" % family)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
