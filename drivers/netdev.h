/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_NETDEV_H
#define SROCE_NETDEV_H

int sroce_netdev_init(void);
void sroce_netdev_exit(void);

#endif /* SROCE_NETDEV_H */
