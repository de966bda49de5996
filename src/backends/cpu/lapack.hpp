// The LAPACK routines the decompositions call (Fortran symbols of the
// LP64 interface Debian's liblapack3 and OpenBLAS export), with
// overloads by element type so the kernels are written once. Debian ships
// no C header for them (lapacke.h is another package and another API):
// these are the reference prototypes, with gfortran's hidden length
// argument for each CHARACTER parameter. Fortran's COMPLEX and COMPLEX*16
// are two reals, real part first: std::complex<float>/<double>'s layout
// (the standard guarantees it), so the c/z routines take those directly.
#pragma once

#include <complex>
#include <cstddef>

extern "C" {
// clang-format off
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, std::size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, std::size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
             std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
             std::size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info, std::size_t);
void cgetrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<float>* a, const int* lda,
             const int* ipiv, std::complex<float>* b, const int* ldb, int* info, std::size_t);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<double>* a, const int* lda,
             const int* ipiv, std::complex<double>* b, const int* ldb, int* info, std::size_t);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info, std::size_t);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info, std::size_t);
void cgeqrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, std::complex<float>* tau,
             std::complex<float>* work, const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, std::complex<double>* tau,
             std::complex<double>* work, const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, std::complex<float>* a, const int* lda,
             const std::complex<float>* tau, std::complex<float>* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, std::complex<double>* a, const int* lda,
             const std::complex<double>* tau, std::complex<double>* work, const int* lwork, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, std::complex<float>* a, const int* lda, float* w,
             std::complex<float>* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, std::size_t, std::size_t);
void zheevd_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* lda, double* w,
             std::complex<double>* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, std::size_t, std::size_t);
void cgesdd_(const char* jobz, const int* m, const int* n, std::complex<float>* a, const int* lda, float* s,
             std::complex<float>* u, const int* ldu, std::complex<float>* vt, const int* ldvt,
             std::complex<float>* work, const int* lwork, float* rwork, int* iwork, int* info, std::size_t);
void zgesdd_(const char* jobz, const int* m, const int* n, std::complex<double>* a, const int* lda, double* s,
             std::complex<double>* u, const int* ldu, std::complex<double>* vt, const int* ldvt,
             std::complex<double>* work, const int* lwork, double* rwork, int* iwork, int* info, std::size_t);
// clang-format on
}

namespace tessel::cpu::lapack {

// clang-format off
inline void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) { dgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrs(int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) { sgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void getrs(int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info) { dgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void potrf_lower(int n, float* a, int lda, int* info) { spotrf_("L", &n, a, &lda, info, 1); }
inline void potrf_lower(int n, double* a, int lda, int* info) { dpotrf_("L", &n, a, &lda, info, 1); }
inline void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) { sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); }
inline void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) { dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); }
inline void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) { sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) { dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void syevd(char jobz, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork, int liwork, int* info) { ssyevd_(&jobz, "L", &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1); }
inline void syevd(char jobz, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork, int liwork, int* info) { dsyevd_(&jobz, "L", &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1); }
inline void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt, float* work, int lwork, int* iwork, int* info) { sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1); }
inline void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt, double* work, int lwork, int* iwork, int* info) { dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1); }

// The complex forms. orgqr names the unitary Q of cungqr/zungqr too, so
// the QR kernel is one template; the Hermitian eigensolver and the SVD
// take a real workspace beside the complex one and have their own names.
using c64 = std::complex<float>;
using c128 = std::complex<double>;
inline void getrf(int m, int n, c64* a, int lda, int* ipiv, int* info) { cgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, c128* a, int lda, int* ipiv, int* info) { zgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrs(int n, int nrhs, const c64* a, int lda, const int* ipiv, c64* b, int ldb, int* info) { cgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void getrs(int n, int nrhs, const c128* a, int lda, const int* ipiv, c128* b, int ldb, int* info) { zgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void potrf_lower(int n, c64* a, int lda, int* info) { cpotrf_("L", &n, a, &lda, info, 1); }
inline void potrf_lower(int n, c128* a, int lda, int* info) { zpotrf_("L", &n, a, &lda, info, 1); }
inline void geqrf(int m, int n, c64* a, int lda, c64* tau, c64* work, int lwork, int* info) { cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); }
inline void geqrf(int m, int n, c128* a, int lda, c128* tau, c128* work, int lwork, int* info) { zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); }
inline void orgqr(int m, int n, int k, c64* a, int lda, const c64* tau, c64* work, int lwork, int* info) { cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void orgqr(int m, int n, int k, c128* a, int lda, const c128* tau, c128* work, int lwork, int* info) { zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void heevd(char jobz, int n, c64* a, int lda, float* w, c64* work, int lwork, float* rwork, int lrwork, int* iwork, int liwork, int* info) { cheevd_(&jobz, "L", &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1); }
inline void heevd(char jobz, int n, c128* a, int lda, double* w, c128* work, int lwork, double* rwork, int lrwork, int* iwork, int liwork, int* info) { zheevd_(&jobz, "L", &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1); }
inline void gesdd(char jobz, int m, int n, c64* a, int lda, float* s, c64* u, int ldu, c64* vt, int ldvt, c64* work, int lwork, float* rwork, int* iwork, int* info) { cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1); }
inline void gesdd(char jobz, int m, int n, c128* a, int lda, double* s, c128* u, int ldu, c128* vt, int ldvt, c128* work, int lwork, double* rwork, int* iwork, int* info) { zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1); }
// clang-format on

}  // namespace tessel::cpu::lapack
