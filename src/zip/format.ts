/**
 * ZIP record layouts shared by the reader and the writer (PKWARE APPNOTE 6.3). Only what Ward's
 * deterministic archives and their readers need: no encryption, no multi-disk. ZIP64 is written
 * (and read) only when an archive needs it: more than 65,534 entries, or offsets past 4 GiB.
 */
export const LOCAL_HEADER_SIG = 0x04034b50;
export const CENTRAL_HEADER_SIG = 0x02014b50;
export const END_OF_CENTRAL_DIR_SIG = 0x06054b50;
export const DATA_DESCRIPTOR_SIG = 0x08074b50;
export const ZIP64_LOCATOR_SIG = 0x07064b50;
export const ZIP64_END_OF_CENTRAL_DIR_SIG = 0x06064b50;

export const LOCAL_HEADER_LEN = 30;
export const CENTRAL_HEADER_LEN = 46;
export const END_OF_CENTRAL_DIR_LEN = 22;
export const DATA_DESCRIPTOR_LEN = 16;
export const ZIP64_LOCATOR_LEN = 20;
/** The fixed part of the ZIP64 end record (no extensible data), signature included. */
export const ZIP64_END_OF_CENTRAL_DIR_LEN = 56;

/** ZIP64 extended information extra field (APPNOTE 4.5.3). */
export const ZIP64_EXTRA_ID = 0x0001;
export const UINT16_MAX = 0xffff;
export const UINT32_MAX = 0xffffffff;

export const METHOD_STORE = 0;
export const METHOD_DEFLATE = 8;

export const FLAG_ENCRYPTED = 0x0001;
export const FLAG_DATA_DESCRIPTOR = 0x0008;
export const FLAG_STRONG_ENCRYPTION = 0x0040;
export const FLAG_UTF8 = 0x0800;

/** "Version made by": Unix creator (3) with spec version 2.0, what Go writes after `SetMode`. */
export const VERSION_MADE_BY_UNIX_20 = 0x0314;
export const VERSION_NEEDED_20 = 20;
/** Version 4.5: ZIP64 (what Go writes in the ZIP64 end record). */
export const VERSION_45 = 45;

/** Extended-timestamp extra field (Info-ZIP "UT"), which Go appends for a non-zero Modified. */
export const EXTENDED_TIMESTAMP_ID = 0x5455;

/** S_IFREG: the file-type bits Go puts above the permission bits in the external attributes. */
export const S_IFREG = 0o100000;
export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
