#!/usr/bin/python3
"""Differential test of location redaction in the places and formats no parser walks.

Generators build files that carry one coordinate where the structural parsers do not look:
formats the sniffer does not know or knows only as "no parser" (Olympus ORF, Panasonic RW2, DNG,
CR2, PSD, JPEG 2000, AVI, WAV, MP3, PDF, ZIP, Matroska, an XMP sidecar), places inside known
formats (GoPro GPMF in JPEG APP6 and MP4 udta, C2PA/JUMBF in JPEG APP11, PNG caBX and an MP4 uuid
box, XMP in a PNG text chunk under an unusual keyword) and data after an image's end (motion
photos as Pixel and Samsung write them, a second JPEG, a video after a PNG).

The oracle is what a reader can get out of the bytes: exiftool (-ee, so embedded streams count)
and ffprobe on the file, the same two on every embedded file a carver finds in it (an ISO-BMFF
file at each "ftyp", a JPEG at each SOI, a TIFF at each TIFF header, an XMP packet at each
<x:xmpmeta), and the coordinate's text spellings in the raw bytes. Whatever the oracle finds in
the original, it must find none of in what the redacted reader gets: the copy
`scopedfsctl scan --redacted_out` writes (for a malformed scan that is the REDACT_ALL copy; under
DENY the reader gets nothing). A variant in which the oracle finds nothing proves nothing and is
reported "inert"; more than a quarter inert fails the test.

Usage: differential_formats_test.py [--ctl=PATH] [--keep=DIR] [--only=SUBSTRING]
"""

import json
import os
import re
import struct
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential_runner  # noqa: E402
from differential_image_test import (XMP_LAT, XMP_LON, Tiff, jpeg_segment,  # noqa: E402
                                     jpeg_with, png_chunk, png_split, riff_chunk, xmp_packet)

# The coordinate as readers print it (exiftool -n, ffprobe, ISO 6709, XMP text).
COORDS = re.compile(r"37\.77|122\.41|37 deg 46|122 deg 25|\+37\.7|-122\.4|37,46\.49|122,25\.16")
ISO6709 = "+37.7749-122.4194/"
# Text spellings whose presence in the raw bytes is a finding of its own (JSON, XMP, ISO 6709).
LITERALS = [XMP_LAT.encode(), XMP_LON.encode(), ISO6709.encode()]
MAX_CARVES = 8
# Motion photos whose video must stay playable in the redacted copy (only its location goes).
KEEPS_VIDEO = {"motion/pixel", "motion/samsung", "motion/pixel_gps_jpeg"}

# ---------------------------------------------------------------------------------------------
# Building blocks


def box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def tiff_gps(big_endian=False, pad=b""):
    """A TIFF whose IFD0 points to a GPS IFD; `pad` goes right after the 8-byte header (CR2)."""
    t = Tiff(big_endian)
    if pad:
        t.buf += pad
    ifd0 = t.reserve_ifd(3)
    t.set_ifd0(ifd0)
    t.write_ifd(ifd0, [(0x0112, 3, 1, t.u16(1)), (0xC612, 1, 4, b"\x01\x04\x00\x00"),
                       t.ptr(0x8825, t.gps_ifd())])
    return bytes(t.buf)


def gpmf(key, typ, size, repeat, data):
    body = key + bytes([ord(typ) if isinstance(typ, str) else typ, size]) + struct.pack(">H", repeat)
    return body + data + b"\0" * (-len(data) % 4)


def gpmf_gps():
    """DEVC > STRM > SCAL + GPS5, as GoPro cameras write them."""
    scal = gpmf(b"SCAL", "l", 4, 5, struct.pack(">5i", 10000000, 10000000, 1000, 1000, 100))
    gps5 = gpmf(b"GPS5", "l", 20, 1, struct.pack(">5i", 377749000, -1224194000, 15000, 0, 0))
    unit = gpmf(b"UNIT", "c", 3, 5, b"degdegm\0\0m/sm/s")
    inner = scal + unit + gps5
    strm = b"STRM" + bytes([0, 4]) + struct.pack(">H", len(inner) // 4) + inner
    dvnm = gpmf(b"DVNM", "c", 6, 1, b"Camera")
    dev_inner = gpmf(b"DVID", "L", 4, 1, struct.pack(">I", 1)) + dvnm + strm
    return b"DEVC" + bytes([0, 4]) + struct.pack(">H", len(dev_inner) // 4) + dev_inner


def jumbf_c2pa():
    """A C2PA manifest store with one JSON assertion holding Exif GPS (stds.exif)."""
    json_uuid = bytes.fromhex("6A736F6E00110010800000AA00389B71")
    c2pa_uuid = bytes.fromhex("6332706100110010800000AA00389B71")
    assertion = json.dumps({"@context": {"exif": "http://ns.adobe.com/exif/1.0/"},
                            "exif:GPSLatitude": XMP_LAT, "exif:GPSLongitude": XMP_LON}).encode()
    inner = box(b"jumb", box(b"jumd", json_uuid + b"\x03stds.exif\0") + box(b"json", assertion))
    return box(b"jumb", box(b"jumd", c2pa_uuid + b"\x03c2pa\0") + inner)


def id3v2(frames):
    size = len(frames)
    syncsafe = bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F])
    return b"ID3\x03\x00\x00" + syncsafe + frames


def id3_frame(fid, data):
    return fid + struct.pack(">I", len(data)) + b"\0\0" + data


def riff_with(riff, chunks, before_data=False):
    """Adds chunks to a RIFF file (at its end, or before its first 'data'/'LIST' movi chunk)."""
    body = riff[12:]
    if before_data:
        at = body.find(b"data") if riff[8:12] == b"WAVE" else body.find(b"LIST", 4)
        body = body[:at] + b"".join(chunks) + body[at:]
    else:
        body = body + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + riff[8:12] + body


def mp4_with_udta_child(mp4, child):
    """Adds a udta box holding `child` at the end of the moov box (ffmpeg writes moov last)."""
    at = mp4.rfind(b"moov") - 4
    size = struct.unpack(">I", mp4[at:at + 4])[0]
    assert at + size == len(mp4), "moov is not the last box"
    extra = box(b"udta", child)
    return mp4[:at] + struct.pack(">I", size + len(extra)) + mp4[at + 4:] + extra


def psd(resources):
    header = b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, 4, 4, 8, 3)
    res = b"".join(b"8BIM" + struct.pack(">H", rid) + b"\0\0" + struct.pack(">I", len(d)) + d +
                   (b"\0" if len(d) % 2 else b"") for rid, d in resources)
    image = struct.pack(">H", 0) + b"\x80" * (3 * 4 * 4)
    return header + struct.pack(">I", 0) + struct.pack(">I", len(res)) + res + \
        struct.pack(">I", 0) + image


def jp2(extra_boxes):
    sig = box(b"jP  ", b"\r\n\x87\n")
    ftyp = box(b"ftyp", b"jp2 \0\0\0\0jp2 ")
    jp2h = box(b"jp2h", box(b"ihdr", struct.pack(">IIHBBBB", 4, 4, 3, 7, 7, 0, 0)))
    codestream = box(b"jp2c", b"\xff\x4f\xff\x51" + b"\0" * 40 + b"\xff\xd9")
    return sig + ftyp + jp2h + b"".join(extra_boxes) + codestream


def pdf_with_xmp(packet):
    objs = [b"<< /Type /Catalog /Pages 2 0 R /Metadata 3 0 R >>",
            b"<< /Type /Pages /Kids [] /Count 0 >>",
            b"<< /Type /Metadata /Subtype /XML /Length %d >>\nstream\n" % len(packet) + packet +
            b"\nendstream"]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


# ---------------------------------------------------------------------------------------------
# Variants: name -> (extension, bytes)


def variants(base):
    jpg, png, mp4, mp4_loc, wav, avi, mp2 = (base[k] for k in
                                             ("jpg", "png", "mp4", "mp4_loc", "wav", "avi", "mp2"))
    packet = xmp_packet("attr").encode()
    exif_app1 = jpeg_segment(0xE1, b"Exif\0\0" + tiff_gps())
    gps_jpeg = jpeg_with(jpg, [exif_app1])
    v = {}
    # TIFF structures under other magics, and TIFF-based raws under the standard one.
    tiff = tiff_gps()
    v["raw/orf_IIRO"] = ("orf", b"IIRO" + tiff[4:])
    v["raw/orf_IIRS"] = ("orf", b"IIRS" + tiff[4:])
    v["raw/orf_MMOR"] = ("orf", b"MMOR" + tiff_gps(big_endian=True)[4:])
    v["raw/rw2"] = ("rw2", b"IIU\0" + tiff[4:])
    v["raw/dng"] = ("dng", tiff)
    v["raw/cr2"] = ("cr2", tiff_gps(pad=b"CR\x02\x00\x00\x00\x00\x00"))
    # Photoshop and JPEG 2000.
    v["psd/exif"] = ("psd", psd([(0x0422, tiff)]))
    v["psd/xmp"] = ("psd", psd([(0x0424, packet)]))
    xmp_uuid = bytes.fromhex("BE7ACFCB97A942E89C71999491E3AFAC")
    v["jp2/uuid_xmp"] = ("jp2", jp2([box(b"uuid", xmp_uuid + packet)]))
    v["jp2/uuid_exif"] = ("jp2", jp2([box(b"uuid", b"JpgTiffExif->JP2" + b"Exif\0\0" + tiff)]))
    v["jp2/xml_box"] = ("jp2", jp2([box(b"xml ", packet)]))
    # Recordings and RIFF files.
    v["wav/pmx_end"] = ("wav", riff_with(wav, [riff_chunk(b"_PMX", packet)]))
    v["wav/pmx_before_data"] = ("wav", riff_with(wav, [riff_chunk(b"_PMX", packet)], True))
    v["wav/id3_chunk"] = ("wav", riff_with(wav, [riff_chunk(
        b"id3 ", id3v2(id3_frame(b"PRIV", b"XMP\0" + packet)))]))
    v["avi/pmx"] = ("avi", riff_with(avi, [riff_chunk(b"_PMX", packet)]))
    v["avi/pmx_before_movi"] = ("avi", riff_with(avi, [riff_chunk(b"_PMX", packet)], True))
    v["mp3/id3_priv_xmp"] = ("mp3", id3v2(id3_frame(b"PRIV", b"XMP\0" + packet)) + mp2)
    v["mp3/id3_apic_exif"] = ("mp3", id3v2(id3_frame(
        b"APIC", b"\0image/jpeg\0\x03\0" + gps_jpeg)) + mp2)
    v["mp3/id3_at_end"] = ("mp3", mp2 + id3v2(id3_frame(b"PRIV", b"XMP\0" + packet)))
    # Documents, archives, sidecars, Matroska.
    v["pdf/xmp_metadata"] = ("pdf", pdf_with_xmp(packet))
    v["xmp/sidecar"] = ("xmp", packet)
    v["zip/stored_jpeg"] = ("zip", base["zip_stored"])
    v["mkv/location_tag"] = ("mkv", base["mkv_loc"])
    # GoPro GPMF.
    # ExifTool decodes APP6 GPMF in the byte order of the Exif before it (GoPro's is Motorola).
    plain = Tiff(big_endian=True)
    ifd0 = plain.reserve_ifd(1)
    plain.set_ifd0(ifd0)
    plain.write_ifd(ifd0, [(0x0112, 3, 1, plain.u16(1))])
    mm_exif = jpeg_segment(0xE1, b"Exif\0\0" + bytes(plain.buf))
    v["jpeg/app6_gpmf"] = ("jpg", jpeg_with(jpg, [mm_exif,
                                                  jpeg_segment(0xE6, b"GoPro\0" + gpmf_gps())]))
    v["mp4/udta_gpmf"] = ("mp4", mp4_with_udta_child(mp4, box(b"GPMF", gpmf_gps())))
    # C2PA / JUMBF.
    app11 = jpeg_segment(0xEB, b"JP" + struct.pack(">HI", 1, 1) + jumbf_c2pa())
    v["jpeg/app11_c2pa"] = ("jpg", jpeg_with(jpg, [app11]))
    head, mid, iend = png_split(png)
    v["png/cabx_c2pa"] = ("png", head + png_chunk(b"caBX", jumbf_c2pa()) + mid + iend)
    c2pa_uuid = bytes.fromhex("D8FEC3D61B0E483C92975828877EC481")
    v["mp4/uuid_c2pa"] = ("mp4", mp4 + box(b"uuid", c2pa_uuid + b"\0\0\0\0manifest\0" +
                                           struct.pack(">Q", 0) + jumbf_c2pa()))
    # XMP in a PNG text chunk under a keyword ExifTool does not take as XMP.
    itxt = b"XML:com.example.xmp\0\0\0\0\0" + packet
    v["png/itxt_unusual_keyword"] = ("png", head + png_chunk(b"iTXt", itxt) + mid + iend)
    v["png/text_xmp_keyword"] = ("png", head + png_chunk(b"tEXt", b"xmp\0" + packet) + mid + iend)
    # Data after an image's end: motion photos and their kin.
    v["motion/pixel"] = ("jpg", jpg + mp4_loc)
    v["motion/samsung"] = ("jpg", jpg + b"MotionPhoto_Data" + mp4_loc + b"SEFH" + b"\0" * 12 +
                           b"SEFT")
    v["motion/pixel_gps_jpeg"] = ("jpg", gps_jpeg + mp4_loc)
    v["motion/second_jpeg"] = ("jpg", jpg + gps_jpeg)
    v["motion/third_jpeg"] = ("jpg", jpg + jpg + gps_jpeg)
    v["motion/png_then_mp4"] = ("png", png + mp4_loc)
    v["motion/jpeg_then_xmp"] = ("jpg", jpg + packet)
    return v


# ---------------------------------------------------------------------------------------------
# The oracle


def carves(data, stem, out_dir):
    """Embedded files a reader could cut out of `data`, written next to it."""
    paths = []
    starts = []
    for m in re.finditer(rb"ftyp", data):
        if m.start() >= 4 and m.start() != 4:
            starts.append((m.start() - 4, "mp4"))
    for m in re.finditer(rb"\xff\xd8\xff", data):
        if m.start() > 0:
            starts.append((m.start(), "jpg"))
    for m in re.finditer(rb"II\*\0|MM\0\*", data):
        if m.start() > 0:
            starts.append((m.start(), "tif"))
    for m in re.finditer(rb"<x:xmpmeta|<\?xpacket begin", data):
        end = data.find(b"</x:xmpmeta>", m.start())
        if end > 0:
            paths.append(_write(out_dir, f"{stem}.carve{m.start()}.xmp",
                                data[m.start():end + len(b"</x:xmpmeta>")]))
    for at, ext in starts[:MAX_CARVES]:
        paths.append(_write(out_dir, f"{stem}.carve{at}.{ext}", data[at:]))
    return paths[:MAX_CARVES * 2]


def _write(out_dir, name, data):
    path = os.path.join(out_dir, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def findings(path, carve_dir):
    """Every coordinate the oracle finds in the file at `path`."""
    with open(path, "rb") as f:
        data = f.read()
    found = [f"bytes:{lit.decode()}" for lit in LITERALS if lit in data]
    stem = os.path.basename(path)
    files = [path] + carves(data, stem, carve_dir)
    out = subprocess.run(["exiftool", "-j", "-n", "-ee", "-a", "-u", "-G1"] + files,
                         capture_output=True, text=True, check=False).stdout
    try:
        records = json.loads(out) if out.strip() else []
    except ValueError:
        records = []
    for rec in records:
        src = os.path.basename(rec.get("SourceFile", "?"))
        for key, value in rec.items():
            if key == "SourceFile" or key.startswith(("System:", "File:", "ExifTool:")):
                continue
            if COORDS.search(str(value)):
                found.append(f"exiftool[{src}]:{key}")
    for f in files:
        probe = subprocess.run(["ffprobe", "-v", "quiet", "-of", "json", "-show_entries",
                                "format_tags:stream_tags", f],
                               capture_output=True, text=True, check=False).stdout
        if COORDS.search(probe):
            found.append(f"ffprobe[{os.path.basename(f)}]")
    return sorted(set(found))


def has_video(path, carve_dir):
    """Whether an ISO-BMFF file carved out of `path` still has a video stream ffprobe reads."""
    with open(path, "rb") as f:
        data = f.read()
    for carve in carves(data, os.path.basename(path) + ".video", carve_dir):
        if not carve.endswith(".mp4"):
            continue
        probe = subprocess.run(["ffprobe", "-v", "quiet", "-of", "json", "-show_streams", carve],
                               capture_output=True, text=True, check=False).stdout
        if '"codec_type": "video"' in probe:
            return True
    return False


# ---------------------------------------------------------------------------------------------


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def make_bases(work):
    def path(name):
        return os.path.join(work, name)
    lavfi_v = ["-f", "lavfi", "-i", "color=c=red:s=16x16:d=0.2"]
    lavfi_a = ["-f", "lavfi", "-i", "sine=d=0.2"]
    differential_runner.plain_image(path("base.jpg"))
    differential_runner.plain_image(path("base.png"))
    ff = ["ffmpeg", "-y", "-v", "error"]
    run(ff + lavfi_v + ["-c:v", "mpeg4", path("base.mp4")])
    run(ff + ["-i", path("base.mp4"), "-c", "copy", "-metadata", f"location={ISO6709}",
              path("loc.mp4")])
    run(ff + ["-i", path("base.mp4"), "-c", "copy", "-metadata", f"location={ISO6709}",
              path("loc.mkv")])
    run(ff + lavfi_a + ["-c:a", "pcm_s16le", path("base.wav")])
    run(ff + lavfi_v + ["-c:v", "mpeg4", path("base.avi")])
    run(ff + lavfi_a + ["-c:a", "mp2", "-f", "mp2", path("base.mp2")])
    base = {}
    for key, name in (("jpg", "base.jpg"), ("png", "base.png"), ("mp4", "base.mp4"),
                      ("mp4_loc", "loc.mp4"), ("mkv_loc", "loc.mkv"), ("wav", "base.wav"),
                      ("avi", "base.avi"), ("mp2", "base.mp2")):
        with open(path(name), "rb") as f:
            base[key] = f.read()
    gps_jpeg = jpeg_with(base["jpg"], [jpeg_segment(0xE1, b"Exif\0\0" + tiff_gps())])
    with zipfile.ZipFile(path("stored.zip"), "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("photo.jpg", gps_jpeg)
    with open(path("stored.zip"), "rb") as f:
        base["zip_stored"] = f.read()
    return base


def prepare(work):
    """The variants and their oracle (differential_runner.main)."""
    carve_dir = os.path.join(work, "carves")
    os.makedirs(carve_dir, exist_ok=True)
    base = make_bases(work)
    for key in ("jpg", "png", "mp4", "wav", "avi", "mp2"):
        path = _write(work, "base_check." + key, base[key])
        if findings(path, carve_dir):
            print(f"FAIL: the base {key} already has coordinates")
            return 1

    def keeps_video(name, red):
        if name in KEEPS_VIDEO and not has_video(red, carve_dir):
            return "the motion photo's video is gone from the redacted copy"
        return None

    return variants(base), lambda path: findings(path, carve_dir), keeps_video


def main(argv):
    return differential_runner.main(argv, __doc__, "differential_formats_test",
                                    ("exiftool", "ffprobe", "ffmpeg", "convert"), prepare,
                                    "the oracle")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
