#!/usr/bin/python3
"""Differential test of image location redaction against exiftool.

A generator builds many variants of JPEG, PNG and WebP files that carry a coordinate in the
places and spellings real readers accept: Exif header spellings, IFD routes to the GPS IFD, XMP
packet forms and the containers that hold them. For each variant (differential_runner.py judges):

  * exiftool must find a coordinate in the original (otherwise the variant proves nothing and is
    reported as "inert");
  * `scopedfsctl scan --redacted_out` must either say the file is malformed (the daemon then
    fails closed: uncertain_location DENY refuses the read), or write a redacted copy in which
    exiftool finds no coordinate. A coordinate in that copy is a leak.

For malformed files the copy scan writes is the REDACT_ALL one (fallback filled); a coordinate in
it is reported too, as "fallback leak", and fails the test as well: REDACT_ALL is a policy choice
that must not leak either.

Usage: differential_image_test.py [--ctl=PATH] [--keep=DIR] [--only=SUBSTRING]
Under bazel the scopedfsctl binary comes from the runfiles (tools/scopedfsctl).
"""

import json
import os
import re
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential_runner  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The coordinate every variant carries: 37 deg 46' 29.64" N, 122 deg 25' 9.84" W.

LAT = (37, 46, 29.64)
LON = (122, 25, 9.84)
XMP_LAT = "37,46.494N"
XMP_LON = "122,25.164W"

# ---------------------------------------------------------------------------------------------
# TIFF (Exif) builder


class Tiff:
    """Lays out IFDs and values at increasing offsets in one byte order."""

    def __init__(self, big_endian=False):
        self.e = ">" if big_endian else "<"
        self.buf = bytearray((b"MM\0*" if big_endian else b"II*\0") + b"\0\0\0\0")

    def u16(self, v):
        return struct.pack(self.e + "H", v)

    def u32(self, v):
        return struct.pack(self.e + "I", v)

    def alloc(self, data):
        """Appends `data` (word aligned) and returns its offset."""
        if len(self.buf) % 2:
            self.buf += b"\0"
        at = len(self.buf)
        self.buf += data
        return at

    def reserve_ifd(self, n):
        return self.alloc(b"\0" * (2 + 12 * n + 4))

    def write_ifd(self, at, entries, next_ifd=0):
        """entries: (tag, type, count, value bytes); values over 4 bytes go out of line."""
        out = self.u16(len(entries))
        for tag, typ, count, value in sorted(entries, key=lambda e: e[0]):
            if len(value) <= 4:
                field = value + b"\0" * (4 - len(value))
            else:
                field = self.u32(self.alloc(value))
            out += self.u16(tag) + self.u16(typ) + struct.pack(self.e + "I", count) + field
        out += self.u32(next_ifd)
        self.buf[at:at + len(out)] = out

    def set_ifd0(self, at):
        self.buf[4:8] = self.u32(at)

    def rationals(self, dms):
        out = b""
        for v in dms:
            out += self.u32(int(round(v * 100))) + self.u32(100)
        return out

    def gps_entries(self):
        return [
            (0x0000, 1, 4, b"\x02\x03\x00\x00"),
            (0x0001, 2, 2, b"N\0"),
            (0x0002, 5, 3, self.rationals(LAT)),
            (0x0003, 2, 2, b"W\0"),
            (0x0004, 5, 3, self.rationals(LON)),
        ]

    def gps_ifd(self):
        at = self.reserve_ifd(5)
        self.write_ifd(at, self.gps_entries())
        return at

    def ptr(self, tag, target, typ=4):
        if typ in (3, 8):
            return (tag, typ, 1, self.u16(target))
        return (tag, typ, 1, self.u32(target))


def tiff_with_route(route, big_endian=False):
    """A TIFF whose GPS IFD is reached through `route`."""
    t = Tiff(big_endian)
    ifd0 = t.reserve_ifd(3)
    t.set_ifd0(ifd0)
    orientation = (0x0112, 3, 1, t.u16(1))
    if route == "ifd0":
        t.write_ifd(ifd0, [orientation, t.ptr(0x8825, t.gps_ifd())])
    elif route.startswith("ifd0_type"):
        typ = int(route[len("ifd0_type"):])
        t.write_ifd(ifd0, [orientation, t.ptr(0x8825, t.gps_ifd(), typ)])
    elif route == "ifd0_count2":
        gps = t.gps_ifd()
        t.write_ifd(ifd0, [orientation, (0x8825, 4, 2, t.u32(gps) + t.u32(gps))])
    elif route == "ifd1":
        ifd1 = t.reserve_ifd(2)
        t.write_ifd(ifd1, [(0x0103, 3, 1, t.u16(6)), t.ptr(0x8825, t.gps_ifd())])
        t.write_ifd(ifd0, [orientation], ifd1)
    elif route == "ifd2":
        ifd1 = t.reserve_ifd(1)
        ifd2 = t.reserve_ifd(1)
        t.write_ifd(ifd2, [t.ptr(0x8825, t.gps_ifd())])
        t.write_ifd(ifd1, [(0x0103, 3, 1, t.u16(6))], ifd2)
        t.write_ifd(ifd0, [orientation], ifd1)
    elif route == "exif":
        exif = t.reserve_ifd(2)
        t.write_ifd(exif, [(0x9000, 7, 4, b"0232"), t.ptr(0x8825, t.gps_ifd())])
        t.write_ifd(ifd0, [orientation, t.ptr(0x8769, exif)])
    elif route == "exif_next":
        exif = t.reserve_ifd(1)
        nxt = t.reserve_ifd(1)
        t.write_ifd(nxt, [t.ptr(0x8825, t.gps_ifd())])
        t.write_ifd(exif, [(0x9000, 7, 4, b"0232")], nxt)
        t.write_ifd(ifd0, [orientation, t.ptr(0x8769, exif)])
    elif route == "interop":
        interop = t.reserve_ifd(2)
        t.write_ifd(interop, [(0x0001, 2, 4, b"R98\0"), t.ptr(0x8825, t.gps_ifd())])
        exif = t.reserve_ifd(1)
        t.write_ifd(exif, [t.ptr(0xA005, interop)])
        t.write_ifd(ifd0, [orientation, t.ptr(0x8769, exif)])
    elif route.startswith("subifd"):
        sub = t.reserve_ifd(2)
        if route == "subifd_chain":
            nxt = t.reserve_ifd(1)
            t.write_ifd(nxt, [t.ptr(0x8825, t.gps_ifd())])
            t.write_ifd(sub, [(0x00FE, 4, 1, t.u32(1))], nxt)
        else:
            t.write_ifd(sub, [(0x00FE, 4, 1, t.u32(1)), t.ptr(0x8825, t.gps_ifd())])
        if route in ("subifd", "subifd_chain"):
            t.write_ifd(ifd0, [orientation, t.ptr(0x014A, sub)])
        elif route == "subifd_type13":
            t.write_ifd(ifd0, [orientation, t.ptr(0x014A, sub, 13)])
        elif route == "subifd_count2":
            other = t.reserve_ifd(1)
            t.write_ifd(other, [(0x00FE, 4, 1, t.u32(1))])
            t.write_ifd(ifd0, [orientation, (0x014A, 4, 2, t.u32(other) + t.u32(sub))])
        elif route == "subifd_in_exif":
            exif = t.reserve_ifd(1)
            t.write_ifd(exif, [t.ptr(0x014A, sub)])
            t.write_ifd(ifd0, [orientation, t.ptr(0x8769, exif)])
        else:
            raise ValueError(route)
    elif route == "globalparams":
        gp = t.reserve_ifd(1)
        t.write_ifd(gp, [t.ptr(0x8825, t.gps_ifd())])
        t.write_ifd(ifd0, [orientation, t.ptr(0x0190, gp)])
    elif route == "appnotes_xmp":
        packet = xmp_packet("attr").encode()
        t.write_ifd(ifd0, [orientation, (0x02BC, 1, len(packet), packet)])
    else:
        raise ValueError(route)
    return bytes(t.buf)


TIFF_ROUTES = ["ifd0", "ifd0_type13", "ifd0_type3", "ifd0_type9", "ifd0_count2", "ifd1", "ifd2",
               "exif", "exif_next", "interop", "subifd", "subifd_type13", "subifd_count2",
               "subifd_chain", "subifd_in_exif", "globalparams", "appnotes_xmp"]

# ---------------------------------------------------------------------------------------------
# XMP packets

EXIF_NS = "http://ns.adobe.com/exif/1.0/"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"


def wrap_rdf(description):
    return ("<?xpacket begin='\ufeff' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
            "<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
            f"<rdf:RDF xmlns:rdf='{RDF_NS}'>\n{description}\n</rdf:RDF>\n</x:xmpmeta>\n"
            "<?xpacket end='w'?>")


def xmp_packet(form):
    d = "<rdf:Description rdf:about=''"
    if form == "attr":
        body = (f"{d} xmlns:exif='{EXIF_NS}' exif:GPSLatitude='{XMP_LAT}' "
                f"exif:GPSLongitude='{XMP_LON}'/>")
    elif form == "attr_dq_spaces":
        body = (f'{d} xmlns:exif="{EXIF_NS}"\n   exif:GPSLatitude = "{XMP_LAT}"\n'
                f'   exif:GPSLongitude =\t"{XMP_LON}" />')
    elif form == "element":
        body = (f"{d} xmlns:exif='{EXIF_NS}'>\n<exif:GPSLatitude>{XMP_LAT}</exif:GPSLatitude>\n"
                f"<exif:GPSLongitude>{XMP_LON}</exif:GPSLongitude>\n</rdf:Description>")
    elif form == "other_prefix":
        body = (f"{d} xmlns:e='{EXIF_NS}'>\n<e:GPSLatitude>{XMP_LAT}</e:GPSLatitude>\n"
                f"<e:GPSLongitude>{XMP_LON}</e:GPSLongitude>\n</rdf:Description>")
    elif form == "exifex":
        body = (f"{d} xmlns:exifEX='http://cipa.jp/exif/1.0/' xmlns:exif='{EXIF_NS}'"
                f" exifEX:GPSLatitude='{XMP_LAT}' exif:GPSLongitude='{XMP_LON}'/>")
    elif form == "rdf_li":
        body = (f"{d} xmlns:exif='{EXIF_NS}'>\n<exif:GPSLatitude><rdf:Seq><rdf:li>{XMP_LAT}"
                f"</rdf:li></rdf:Seq></exif:GPSLatitude>\n<exif:GPSLongitude><rdf:Alt>"
                f"<rdf:li xml:lang='x-default'>{XMP_LON}</rdf:li></rdf:Alt></exif:GPSLongitude>\n"
                "</rdf:Description>")
    elif form == "cdata":
        body = (f"{d} xmlns:exif='{EXIF_NS}'>\n<exif:GPSLatitude><![CDATA[{XMP_LAT}]]>"
                f"</exif:GPSLatitude>\n<exif:GPSLongitude><![CDATA[{XMP_LON}]]>"
                "</exif:GPSLongitude>\n</rdf:Description>")
    elif form == "entities":
        lat = "&#51;&#55;,46.494&#x4E;"
        body = (f"{d} xmlns:exif='{EXIF_NS}'>\n<exif:GPSLatitude>{lat}</exif:GPSLatitude>\n"
                f"<exif:GPSLongitude>{XMP_LON}</exif:GPSLongitude>\n</rdf:Description>")
    elif form == "resource":
        body = (f"{d} xmlns:exif='{EXIF_NS}'>\n<exif:GPSLatitude rdf:parseType='Resource'>"
                f"<rdf:value>{XMP_LAT}</rdf:value></exif:GPSLatitude>\n"
                f"<exif:GPSLongitude rdf:value='{XMP_LON}'/>\n</rdf:Description>")
    elif form == "iptc_location_shown":
        body = (f"{d} xmlns:Iptc4xmpExt='http://iptc.org/std/Iptc4xmpExt/2008-02-29/'"
                f" xmlns:exif='{EXIF_NS}'>\n<Iptc4xmpExt:LocationShown><rdf:Bag>"
                f"<rdf:li exif:GPSLatitude='{XMP_LAT}' exif:GPSLongitude='{XMP_LON}'/>"
                "</rdf:Bag></Iptc4xmpExt:LocationShown>\n</rdf:Description>")
    elif form == "comment_between":
        body = (f"{d} xmlns:exif='{EXIF_NS}'>\n<!-- a comment -->\n"
                f"<exif:GPSLatitude>{XMP_LAT}</exif:GPSLatitude><!-- x -->\n"
                f"<exif:GPSLongitude>{XMP_LON}</exif:GPSLongitude>\n</rdf:Description>")
    elif form == "no_wrapper":
        return (f"<rdf:RDF xmlns:rdf='{RDF_NS}'>{d} xmlns:exif='{EXIF_NS}' "
                f"exif:GPSLatitude='{XMP_LAT}' exif:GPSLongitude='{XMP_LON}'/></rdf:RDF>")
    elif form == "two_descriptions":
        body = (f"{d} xmlns:xmp='http://ns.adobe.com/xap/1.0/' xmp:Rating='3'/>\n"
                f"{d} xmlns:exif='{EXIF_NS}'><exif:GPSLatitude>{XMP_LAT}</exif:GPSLatitude>"
                f"<exif:GPSLongitude>{XMP_LON}</exif:GPSLongitude></rdf:Description>")
    else:
        raise ValueError(form)
    return wrap_rdf(body)


XMP_FORMS = ["attr", "attr_dq_spaces", "element", "other_prefix", "exifex", "rdf_li", "cdata",
             "entities", "resource", "iptc_location_shown", "comment_between", "no_wrapper",
             "two_descriptions"]

# ---------------------------------------------------------------------------------------------
# JPEG

XMP_ID = b"http://ns.adobe.com/xap/1.0/\0"


def jpeg_segment(marker, payload):
    assert len(payload) + 2 <= 0xFFFF
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg_with(base, segments):
    """Inserts segments right after SOI (before the base's own APP0)."""
    assert base[:2] == b"\xff\xd8"
    return base[:2] + b"".join(segments) + base[2:]


def photoshop_irb(resources):
    out = b""
    for rid, data in resources:
        out += b"8BIM" + struct.pack(">H", rid) + b"\0\0" + struct.pack(">I", len(data)) + data
        if len(data) % 2:
            out += b"\0"
    return out


def extended_xmp(packet):
    """A main packet pointing at an ExtendedXMP GUID, and one ExtendedXMP segment with the GPS."""
    import hashlib
    ext = packet.encode()
    guid = hashlib.md5(ext).hexdigest().upper().encode()
    main = wrap_rdf("<rdf:Description rdf:about='' xmlns:xmpNote='http://ns.adobe.com/xmp/note/'"
                    f" xmpNote:HasExtendedXMP='{guid.decode()}'/>").encode()
    seg1 = jpeg_segment(0xE1, XMP_ID + main)
    seg2 = jpeg_segment(0xE1, b"http://ns.adobe.com/xmp/extension/\0" + guid +
                        struct.pack(">II", len(ext), 0) + ext)
    return [seg1, seg2]


def jpeg_variants(base):
    v = {}
    tiff = tiff_with_route("ifd0")
    for name, header in [("Exif00", b"Exif\0\0"), ("EXIF00", b"EXIF\0\0"),
                         ("exif00", b"exif\0\0"), ("eXiF00", b"eXiF\0\0"),
                         ("Exif0FF", b"Exif\0\xff"), ("Exif0X", b"Exif\0X"),
                         ("garbage2_Exif00", b"ab" + b"Exif\0\0"),
                         ("garbage4_EXIF00", b"abcd" + b"EXIF\0\0"),
                         ("no_header_tiff", b"")]:
        v[f"jpeg/app1_header/{name}"] = jpeg_with(base, [jpeg_segment(0xE1, header + tiff)])
    for be in (False, True):
        for route in TIFF_ROUTES:
            order = "MM" if be else "II"
            v[f"jpeg/ifd_route/{order}/{route}"] = jpeg_with(
                base, [jpeg_segment(0xE1, b"Exif\0\0" + tiff_with_route(route, be))])
    # Two Exif segments: a clean one first, the GPS one second.
    clean = Tiff()
    ifd0 = clean.reserve_ifd(1)
    clean.set_ifd0(ifd0)
    clean.write_ifd(ifd0, [(0x0112, 3, 1, clean.u16(1))])
    v["jpeg/multi/clean_then_gps"] = jpeg_with(
        base, [jpeg_segment(0xE1, b"Exif\0\0" + bytes(clean.buf)),
               jpeg_segment(0xE1, b"Exif\0\0" + tiff)])
    # Multi-segment Exif: one TIFF split across two APP1 segments (the second has no TIFF header).
    big = tiff_with_route("ifd0")
    half = len(big) // 2
    v["jpeg/multi/split_tiff"] = jpeg_with(
        base, [jpeg_segment(0xE1, b"Exif\0\0" + big[:half]),
               jpeg_segment(0xE1, b"Exif\0\0" + big[half:])])
    # Exif elsewhere.
    v["jpeg/app3_meta_tiff"] = jpeg_with(base, [jpeg_segment(0xE3, b"Meta\0\0" + tiff)])
    v["jpeg/app3_exif_tiff"] = jpeg_with(base, [jpeg_segment(0xE3, b"Exif\0\0" + tiff)])
    v["jpeg/app13_exifinfo"] = jpeg_with(
        base, [jpeg_segment(0xED, b"Photoshop 3.0\0" + photoshop_irb([(0x0422, tiff)]))])
    # XMP.
    for form in XMP_FORMS:
        v[f"jpeg/xmp_form/{form}"] = jpeg_with(
            base, [jpeg_segment(0xE1, XMP_ID + xmp_packet(form).encode())])
    packet = xmp_packet("attr").encode()
    for name, header in [("XMP0", b"XMP\0"), ("http_space", b"http://ns.adobe.com/xap/1.0/ "),
                         ("http_other", b"http://example.com/xmp\0"),
                         ("no_header", b""), ("garbage_header", b"junk\0")]:
        v[f"jpeg/xmp_header/{name}"] = jpeg_with(base, [jpeg_segment(0xE1, header + packet)])
    v["jpeg/xmp_header/no_xpacket_exif_prefix"] = jpeg_with(
        base, [jpeg_segment(0xE1, b"junk\0" + xmp_packet("no_wrapper").encode())])
    v["jpeg/extended_xmp"] = jpeg_with(base, extended_xmp(xmp_packet("element")))
    v["jpeg/com_xmp"] = jpeg_with(base, [jpeg_segment(0xFE, packet)])
    v["jpeg/app13_xmp"] = jpeg_with(
        base, [jpeg_segment(0xED, b"Photoshop 3.0\0" + photoshop_irb([(0x0424, packet)]))])
    v["jpeg/app13_xmp_after_iptc"] = jpeg_with(
        base, [jpeg_segment(0xED, b"Photoshop 3.0\0" + photoshop_irb(
            [(0x0404, b"\x1c\x02\x00\x00\x02\x00\x04"), (0x0424, packet)]))])
    v["jpeg/exif_appnotes_xmp"] = jpeg_with(
        base, [jpeg_segment(0xE1, b"Exif\0\0" + tiff_with_route("appnotes_xmp"))])
    return v

# ---------------------------------------------------------------------------------------------
# PNG


def png_chunk(ctype, data):
    return (struct.pack(">I", len(data)) + ctype + data +
            struct.pack(">I", zlib.crc32(ctype + data) & 0xFFFFFFFF))


def png_split(base):
    """(signature + IHDR, middle chunks, IEND chunk)."""
    ihdr_end = 8 + 8 + 13 + 4
    iend = base.rindex(b"IEND") - 4
    return base[:ihdr_end], base[ihdr_end:iend], base[iend:]


def raw_profile(name, data):
    hexed = data.hex()
    lines = "\n".join(hexed[i:i + 72] for i in range(0, len(hexed), 72))
    return f"\n{name}\n{len(data):8d}\n{lines}\n".encode()


def png_text(ctype, keyword, text, compressed=False):
    k = keyword.encode() + b"\0"
    if ctype == b"tEXt":
        return png_chunk(ctype, k + text)
    if ctype == b"zTXt":
        return png_chunk(ctype, k + b"\0" + zlib.compress(text))
    body = zlib.compress(text) if compressed else text
    return png_chunk(b"iTXt", k + (b"\1\0" if compressed else b"\0\0") + b"\0\0" + body)


def png_variants(base):
    head, middle, iend = png_split(base)
    tiff = tiff_with_route("ifd0")
    packet = xmp_packet("attr").encode()
    v = {}

    def add(name, chunks, after=b""):
        v[name] = head + b"".join(chunks) + middle + iend + after

    for ctype in (b"eXIf", b"exIf", b"EXIF", b"eXIF"):
        add(f"png/exif_chunk/{ctype.decode()}", [png_chunk(ctype, tiff)])
    add("png/exif_chunk/eXIf_with_header", [png_chunk(b"eXIf", b"Exif\0\0" + tiff)])
    add("png/exif_chunk/zxIf", [png_chunk(b"zxIf", b"\0" + struct.pack(">I", len(tiff)) +
                                          zlib.compress(tiff))])
    for route in ("exif", "subifd", "subifd_chain", "ifd1", "appnotes_xmp"):
        add(f"png/exif_route/{route}", [png_chunk(b"eXIf", tiff_with_route(route))])
    for ctype in (b"tEXt", b"zTXt", b"iTXt"):
        add(f"png/xmp/{ctype.decode()}", [png_text(ctype, "XML:com.adobe.xmp", packet)])
    add("png/xmp/iTXt_compressed",
        [png_text(b"iTXt", "XML:com.adobe.xmp", packet, compressed=True)])
    for form in ("element", "other_prefix", "cdata", "rdf_li"):
        add(f"png/xmp_form/{form}",
            [png_text(b"iTXt", "XML:com.adobe.xmp", xmp_packet(form).encode())])
    for ctype in (b"tEXt", b"zTXt", b"iTXt"):
        t = ctype.decode()
        add(f"png/raw_profile/exif/{t}",
            [png_text(ctype, "Raw profile type exif", raw_profile("exif", b"Exif\0\0" + tiff))])
        add(f"png/raw_profile/APP1_exif/{t}",
            [png_text(ctype, "Raw profile type APP1", raw_profile("APP1", b"Exif\0\0" + tiff))])
        add(f"png/raw_profile/APP1_xmp/{t}",
            [png_text(ctype, "Raw profile type APP1", raw_profile("APP1", XMP_ID + packet))])
        add(f"png/raw_profile/xmp/{t}",
            [png_text(ctype, "Raw profile type xmp", raw_profile("xmp", packet))])
        add(f"png/raw_profile/8bim_xmp/{t}",
            [png_text(ctype, "Raw profile type 8bim",
                      raw_profile("8bim", photoshop_irb([(0x0424, packet)])))])
        add(f"png/raw_profile/iptc_irb_exif/{t}",
            [png_text(ctype, "Raw profile type iptc",
                      raw_profile("iptc", photoshop_irb([(0x0422, tiff)])))])
    add("png/raw_profile/exif_bare_tiff",
        [png_text(b"zTXt", "Raw profile type exif", raw_profile("exif", tiff))])
    # Placement: after IDAT, and after IEND (exiftool reads a trailer as more chunks).
    v["png/placement/eXIf_after_idat"] = head + middle + png_chunk(b"eXIf", tiff) + iend
    v["png/placement/eXIf_after_iend"] = head + middle + iend + png_chunk(b"eXIf", tiff)
    v["png/placement/xmp_after_iend"] = head + middle + iend + png_text(
        b"iTXt", "XML:com.adobe.xmp", packet)
    # ImageMagick-style per-property text chunks.
    add("png/text_property/exif_GPSLatitude",
        [png_text(b"tEXt", "exif:GPSLatitude", b"37/1, 46/1, 2964/100"),
         png_text(b"tEXt", "exif:GPSLatitudeRef", b"N")])
    return v

# ---------------------------------------------------------------------------------------------
# WebP


def riff_chunk(fourcc, data):
    return fourcc + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")


def webp_variants(base):
    assert base[:4] == b"RIFF" and base[8:12] == b"WEBP"
    vp8 = base[12:]  # the image chunk(s)
    tiff = tiff_with_route("ifd0")
    packet = xmp_packet("attr").encode()
    v = {}

    def webp(chunks, flags=0x0C, trailer=b"", size_delta=0):
        vp8x = riff_chunk(b"VP8X", bytes([flags, 0, 0, 0]) + (15).to_bytes(3, "little") +
                          (15).to_bytes(3, "little"))
        body = b"WEBP" + vp8x + vp8 + b"".join(chunks)
        return b"RIFF" + struct.pack("<I", len(body) + size_delta) + body + trailer

    v["webp/exif/plain"] = webp([riff_chunk(b"EXIF", tiff)])
    v["webp/exif/exif_header"] = webp([riff_chunk(b"EXIF", b"Exif\0\0" + tiff)])
    v["webp/exif/no_vp8x_flag"] = webp([riff_chunk(b"EXIF", tiff)], flags=0)
    for route in ("exif", "subifd", "subifd_chain", "interop", "appnotes_xmp"):
        v[f"webp/exif_route/{route}"] = webp([riff_chunk(b"EXIF", tiff_with_route(route))])
    v["webp/xmp/plain"] = webp([riff_chunk(b"XMP ", packet)])
    v["webp/xmp/element"] = webp([riff_chunk(b"XMP ", xmp_packet("element").encode())])
    v["webp/xmp/_PMX"] = webp([riff_chunk(b"_PMX", packet)])
    v["webp/placement/exif_past_riff_size"] = webp([], trailer=riff_chunk(b"EXIF", tiff))
    v["webp/placement/xmp_past_riff_size"] = webp([], trailer=riff_chunk(b"XMP ", packet))
    v["webp/placement/exif_before_image"] = (
        lambda body: b"RIFF" + struct.pack("<I", len(body)) + body)(
            b"WEBP" + riff_chunk(b"EXIF", tiff) + vp8)
    return v

# ---------------------------------------------------------------------------------------------
# Judging


COORD_TAG = re.compile(r"gps|latitude|longitude|coordinates", re.I)


def coordinates(path):
    """Tags exiftool reports whose name looks like a coordinate and whose value has a nonzero
    digit (an emptied or zero-filled tag may still decode as 0 deg 0' 0.00")."""
    out = subprocess.run(["exiftool", "-j", "-n", "-G1", "-a", "-u", path],
                         capture_output=True, text=True, check=False).stdout
    try:
        tags = json.loads(out)[0]
    except (ValueError, IndexError):
        return {}
    found = {}
    for key, value in tags.items():
        name = key.split(":")[-1]
        if not COORD_TAG.search(name) or name.endswith("Ref") or "Version" in name:
            continue
        if isinstance(value, (int, float)):
            if value != 0:
                found[key] = value
        elif isinstance(value, str) and re.search(r"[1-9]", value) and \
                not value.startswith("(Binary"):
            found[key] = value
    return found


def prepare(work):
    """The variants and their oracle (differential_runner.main)."""
    bases = {}
    for ext in ("jpg", "png", "webp"):
        path = os.path.join(work, "base." + ext)
        differential_runner.plain_image(path)
        with open(path, "rb") as f:
            bases[ext] = f.read()
        if coordinates(path):
            print(f"FAIL: the base {ext} already has coordinates")
            return 1

    variants = {}
    variants.update(jpeg_variants(bases["jpg"]))
    variants.update(png_variants(bases["png"]))
    variants.update(webp_variants(bases["webp"]))
    ext = {"jpeg": "jpg", "png": "png", "webp": "webp"}
    return ({name: (ext[name.split("/")[0]], data) for name, data in variants.items()},
            coordinates, None)


def main(argv):
    return differential_runner.main(argv, __doc__, "differential_image_test",
                                    ("exiftool", "convert"), prepare, "exiftool")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
