#ifndef CIAPOPENSSL_SHIM_H
#define CIAPOPENSSL_SHIM_H

// Compile against the OpenSSL 3 API only: everything deprecated in 3.0 (EC_KEY_*, ECDSA_do_sign, ...)
// disappears from Swift's view, so it cannot be used by accident.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/opensslv.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/objects.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/core_names.h>
#include <openssl/pkcs7.h>
#include <openssl/ocsp.h>

// Swift cannot import function-like macros; these re-expose the few the package needs.
static inline void ciap_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline STACK_OF(X509) *ciap_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int ciap_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void ciap_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline int ciap_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *ciap_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
static inline long ciap_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
// XN_FLAG_RFC2253 without ASN1_STRFLGS_ESC_MSB, so UTF-8 in names prints as UTF-8 instead of \XX escapes.
static inline unsigned long ciap_XN_FLAG_RFC2253_UTF8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }

// The first OCSP responder URL of a certificate's Authority Information Access, as a copy to free with
// ciap_OPENSSL_free, or NULL when it names none.
static inline char *ciap_ocsp_url(X509 *certificate) {
    STACK_OF(OPENSSL_STRING) *urls = X509_get1_ocsp(certificate);
    char *copy = NULL;
    if (urls != NULL) {
        if (sk_OPENSSL_STRING_num(urls) > 0) {
            copy = OPENSSL_strdup(sk_OPENSSL_STRING_value(urls, 0));
        }
        X509_email_free(urls);
    }
    return copy;
}

#endif
