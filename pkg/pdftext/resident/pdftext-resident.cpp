// pdftext-resident: a long-lived layout-text extractor for docintake's
// "resident" engine (pkg/pdftext/resident.go).
//
// It links Debian's libpoppler-cpp and calls page::text(rect,
// physical_layout), which runs poppler's TextOutputDev in physical layout
// mode, the code path of `pdftotext -layout`. One process serves many
// documents, so the exec, dynamic linking and teardown that dominate a
// pdftotext run per document are paid once per helper. It is a separate
// process on purpose: a crash in poppler costs one document, and poppler's
// GPL stays on the far side of a pipe.
//
// The Go side sandboxes the process at spawn (rlimits, cleared environment,
// private working directory, a uid of its own, seccomp, mount, network and
// pid namespaces; see sandbox_linux.go) and kills
// it on a per-document deadline; this program only reads requests and
// answers them, one at a time.
//
// Protocol (all integers unsigned 32-bit big-endian; every message is one
// frame: length, then that many bytes):
//
//   hello (helper → Go, once at start):
//     "docintake-pdftext-resident 1 poppler <version>\n"
//   request (Go → helper):
//     header line "B <first> <last> <x> <y> <w> <h>\n", then the PDF's
//     bytes (the helper opens no files). first/last are 1-based pages, 0 meaning the document's
//     first/last page. x y w h is a crop in PDF points (72 dpi) from the
//     top-left corner of the page; w = h = x = y = 0 means the whole page.
//   response (helper → Go):
//     'O' then, per page, <page number> <byte length> <UTF-8 text>, and
//     when poppler reported problems while reading the document, a last
//     record numbered 0 holding its messages, one a line (the Go side
//     picks out the repairs of a broken document's structure);
//     'U' then a message: the document cannot be read;
//     'L' then a message: the text exceeds the output limit.
//
// A malformed request makes the helper exit with status 2: the Go side
// then replaces it.

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>
#include <poppler-rectangle.h>
#include <poppler-version.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <malloc.h>
#include <sys/prctl.h>
#include <unistd.h>

// Text extraction converts no colours, yet poppler builds a Little CMS
// transform for every ICCBased colour space it meets on a page (a page's
// cache only) and for a document's OutputIntents profile, and building one
// reverses the output profile's tone curves (cmsReverseToneCurveEx): over
// half of this helper's CPU on ordinary office PDFs, and of pdftotext's.
// This definition takes the place of liblcms2's at dynamic linking (the
// executable exports it: -Wl,--export-dynamic-symbol=cmsOpenProfileFromMem,
// see the Makefile), so no ICC profile is ever opened: poppler takes its
// "cannot read the profile" path and uses each colour space's alternate
// (or its component count's device space), which the text never depends on.
// TestResidentMatchesPdftotext holds the text equal to pdftotext's, which
// does open the profiles.
extern "C" void *cmsOpenProfileFromMem(const void *, unsigned int) {
    return nullptr;
}

namespace {

// poppler-cpp creates poppler's GlobalParams when a document is opened
// while no other is, and deletes it when the last one closes: a helper
// serving one document at a time built it anew for every document (the
// built-in glyph-name and Unicode tables, the scan of poppler-data's CMap
// and encoding directories; 0.2 ms of the helper's ≈ 2 ms per document on
// invoice2data's golden set, `perf`). main keeps this one-page document
// open for the helper's lifetime, so GlobalParams is built once, as in any
// long-lived poppler application, and its CMap and Unicode-map caches
// serve every document. No document's text depends on it.
constexpr char kKeepAlivePDF[] =
    "%PDF-1.4\n"
    "1 0 obj\n"
    "<</Type/Catalog/Pages 2 0 R>>\n"
    "endobj\n"
    "2 0 obj\n"
    "<</Type/Pages/Kids[3 0 R]/Count 1>>\n"
    "endobj\n"
    "3 0 obj\n"
    "<</Type/Page/Parent 2 0 R/MediaBox[0 0 1 1]>>\n"
    "endobj\n"
    "xref\n"
    "0 4\n"
    "0000000000 65535 f \n"
    "0000000009 00000 n \n"
    "0000000054 00000 n \n"
    "0000000105 00000 n \n"
    "trailer\n"
    "<</Size 4/Root 1 0 R>>\n"
    "startxref\n"
    "166\n"
    "%%EOF\n";

// Requests larger than this are refused before reading them.
constexpr uint32_t kMaxRequest = 1u << 30;

bool read_full(int fd, char *buf, size_t n) {
    while (n > 0) {
        ssize_t r = ::read(fd, buf, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        buf += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

bool write_full(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        buf += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

void put_u32(std::string &out, uint32_t v) {
    char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    out.append(b, 4);
}

uint32_t get_u32(const char *b) {
    const auto *u = reinterpret_cast<const unsigned char *>(b);
    return (uint32_t(u[0]) << 24) | (uint32_t(u[1]) << 16) | (uint32_t(u[2]) << 8) | uint32_t(u[3]);
}

bool send_frame(const std::string &payload) {
    std::string head;
    put_u32(head, static_cast<uint32_t>(payload.size()));
    return write_full(1, head.data(), head.size()) && write_full(1, payload.data(), payload.size());
}

bool send_status(char status, const std::string &msg) {
    std::string p(1, status);
    p += msg;
    return send_frame(p);
}

// poppler reports every syntax problem of a broken file, and repairs what
// it can: a loop in the page tree, a stream whose length points past the
// end of the file. The messages of the document being read are kept (the
// first kMaxMessages, each cut to kMaxMessageBytes) and sent with its text,
// so the Go side knows the text is what was left after a repair; nothing
// goes to stderr, a pipe nobody drains quickly.
constexpr size_t kMaxMessages = 16;
constexpr size_t kMaxMessageBytes = 200;
std::vector<std::string> messages;

void collect(const std::string &msg, void *) {
    if (messages.size() < kMaxMessages) messages.push_back(msg.substr(0, kMaxMessageBytes));
}

struct Request {
    int first = 0, last = 0;
    double x = 0, y = 0, w = 0, h = 0;
    std::vector<char> body;
};

// parse_header takes the frame over: its head is cut off and the rest
// becomes the body without a copy of the PDF.
bool parse_header(std::vector<char> &frame, Request &req) {
    const void *nl = std::memchr(frame.data(), '\n', frame.size());
    if (nl == nullptr) return false;
    size_t hlen = static_cast<const char *>(nl) - frame.data();
    std::string header(frame.data(), hlen);
    char kind = 0;
    if (std::sscanf(header.c_str(), "%c %d %d %lf %lf %lf %lf", &kind, &req.first, &req.last, &req.x, &req.y,
                    &req.w, &req.h) != 7) {
        return false;
    }
    if (kind != 'B') return false;
    frame.erase(frame.begin(), frame.begin() + hlen + 1);
    req.body = std::move(frame);
    return true;
}

// extract answers one request. It returns false only when the answer could
// not be written (the Go side is gone).
bool extract(Request &req, size_t max_output) {
    messages.clear();
    std::unique_ptr<poppler::document> doc;
    // load_from_data takes the bytes over (swaps the vector's buffer).
    poppler::byte_array data;
    data.swap(req.body);
    doc.reset(poppler::document::load_from_data(&data));
    if (!doc) return send_status('U', "cannot open the document (damaged or not a PDF)");
    if (doc->is_locked()) return send_status('U', "the document is encrypted with a password");
    const int pages = doc->pages();
    if (pages <= 0) return send_status('U', "the document has no pages");
    int first = req.first > 0 ? req.first : 1;
    int last = req.last > 0 ? std::min(req.last, pages) : pages;
    const bool crop = req.x != 0 || req.y != 0 || req.w != 0 || req.h != 0;
    std::string out(1, 'O');
    for (int i = first; i <= last; i++) {
        std::unique_ptr<poppler::page> p(doc->create_page(i - 1));
        std::string text;
        if (p) {
            if (!crop) {
                poppler::byte_array u = p->text(poppler::rectf(), poppler::page::physical_layout).to_utf8();
                text.assign(u.begin(), u.end());
            } else if (req.w > 0 && req.h > 0) {
                // A crop of zero width or height holds nothing, as in
                // pdftotext (an empty rectf would mean the whole page).
                poppler::rectf r(req.x, req.y, req.w, req.h);
                poppler::byte_array u = p->text(r, poppler::page::physical_layout).to_utf8();
                text.assign(u.begin(), u.end());
            }
        }
        // TextOutputDev ends a page with the form feed pdftotext prints
        // between pages; the Go side adds its own.
        if (!text.empty() && text.back() == '\f') text.pop_back();
        put_u32(out, static_cast<uint32_t>(i));
        put_u32(out, static_cast<uint32_t>(text.size()));
        out += text;
        if (out.size() > max_output) {
            return send_status('L', "text exceeds " + std::to_string(max_output) + " bytes");
        }
    }
    if (!messages.empty()) {
        std::string m;
        for (const auto &s : messages) {
            m += s;
            m += '\n';
        }
        put_u32(out, 0);
        put_u32(out, static_cast<uint32_t>(m.size()));
        out += m;
    }
    return send_frame(out);
}

}  // namespace

int main(int argc, char **argv) {
    // Not dumpable, before any document is read: a process of the same uid
    // can then neither ptrace this one nor read its /proc/<pid>/mem or
    // environ. (The Go side's trampoline already runs us from an
    // execute-only copy, which the kernel makes non-dumpable at exec; this
    // holds wherever the helper is started from.)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        std::perror("pdftext-resident: PR_SET_DUMPABLE");
        return 2;
    }
    size_t max_output = 16u << 20;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--max-output") == 0 && i + 1 < argc) {
            max_output = std::strtoull(argv[++i], nullptr, 10);
        } else if (std::strcmp(argv[i], "--version") == 0) {
            std::printf("pdftext-resident 1 poppler %s\n", poppler::version_string().c_str());
            return 0;
        } else {
            std::fprintf(stderr, "usage: pdftext-resident [--max-output BYTES] [--version]\n");
            return 2;
        }
    }
    poppler::set_debug_error_function(collect, nullptr);
    // Never closed (see kKeepAlivePDF); load_from_raw_data reads the static
    // bytes in place.
    std::unique_ptr<poppler::document> keep_alive(
        poppler::document::load_from_raw_data(kKeepAlivePDF, sizeof kKeepAlivePDF - 1));
    // One document allocates and frees many objects, some of them large:
    // with glibc's defaults every block of 128 KiB or more is an mmap and
    // munmap of its own, and the heap's top is given back to the kernel
    // (brk) and taken again for the next document. A long-lived helper
    // keeps what it took instead: its address space is bounded by the
    // sandbox's rlimit and its RSS by the pool's recycling.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
    if (!send_frame("docintake-pdftext-resident 1 poppler " + poppler::version_string() + "\n")) return 1;
    for (;;) {
        char head[4];
        if (!read_full(0, head, 4)) return 0;  // the Go side closed the pipe
        uint32_t n = get_u32(head);
        if (n > kMaxRequest) {
            std::fprintf(stderr, "pdftext-resident: request of %u bytes refused\n", n);
            return 2;
        }
        std::vector<char> frame(n);
        if (!read_full(0, frame.data(), n)) return 2;
        Request req;
        if (!parse_header(frame, req)) {
            std::fprintf(stderr, "pdftext-resident: malformed request header\n");
            return 2;
        }
        frame.clear();
        frame.shrink_to_fit();
        bool ok;
        try {
            ok = extract(req, max_output);
        } catch (const std::bad_alloc &) {
            // The address-space limit: the document needs more memory than
            // a helper may have. The heap may be fragmented now; the Go side
            // recycles a helper whose RSS grew.
            ok = send_status('U', "out of memory (address-space limit)");
        } catch (const std::exception &e) {
            ok = send_status('U', std::string("poppler: ") + e.what());
        }
        if (!ok) return 1;
    }
}
